/**
 * docs/deploy.md states facts about the stack in blocks rendered from their one source
 * (scripts/deploy-docs.ts): the page must hold exactly what the sources give today.
 * `npm run docs:deploy` rewrites the blocks after a change.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readSettings } from '../../lib/settings';
import { factsIn, renderDeployFacts, withFacts } from '../../scripts/deploy-docs';
import { PROJECT_ROOT, synthesize, type SynthesizedStack } from './support/synth';

const page = () => fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'deploy.md'), 'utf8');

let synth: SynthesizedStack;
beforeAll(() => {
  synth = synthesize({}, { bundle: false });
});
afterAll(() => synth?.cleanup());

it.each(['inventory', 'permissions', 'alarms', 'prices', 'cost', 'gate'])(
  'the %s block of docs/deploy.md is what its source renders (npm run docs:deploy)',
  (name) => {
    const facts = renderDeployFacts(synth.stack);
    expect(facts[name]).toBeDefined();
    expect(factsIn(page(), name)).toBe(facts[name]);
  },
);

it('renders every block the page has, and rewriting the page changes nothing', () => {
  const facts = renderDeployFacts(synth.stack);
  const blocks = [...page().matchAll(/<!-- deploy-facts:([\w-]+):start -->/g)].map((m) => m[1]);
  expect(blocks.sort()).toEqual(Object.keys(facts).sort());
  expect(withFacts(page(), facts)).toBe(page());
});

it('documents every context value the stack reads in the Options table', () => {
  const keys = new Set<string>();
  // Every switch on, so each reader reaches the values that depend on another.
  readSettings({ tryGetContext: (key: string) => (keys.add(key), key === 'enableBedrock' ? 'true' : undefined) });
  const options = page().slice(page().indexOf('### Options'), page().indexOf('### What a setting changes'));
  expect(keys.size).toBeGreaterThan(10);
  for (const key of keys) expect(options).toContain(`\`${key}\``);
});

it('names every resource of the synthesized template, as many as there are', () => {
  const resources = Object.values(synth.template.toJSON().Resources as Record<string, { Type: string }>);
  const block = factsIn(page(), 'inventory')!;
  expect(block).toContain(`holds ${resources.length} resources`);
  for (const type of new Set(resources.map((r) => r.Type))) expect(block).toContain(`\`${type}\``);
});

it('lists every alarm of the synthesized template, by name', () => {
  const alarms = Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')) as {
    Properties: { AlarmName: string };
  }[];
  const block = factsIn(page(), 'alarms')!;
  expect(block).toContain(`${alarms.length} alarms`);
  for (const a of alarms) expect(block).toContain(`\`${a.Properties.AlarmName.replace('dev-ai-usage-proxy-', '')}\``);
});

it('lists every action of the synthesized roles in the permissions table', () => {
  const table = factsIn(page(), 'permissions')!;
  const policies = Object.values(synth.template.findResources('AWS::IAM::Policy')) as {
    Properties: { PolicyDocument: { Statement: { Action: string | string[] }[] } };
  }[];
  const actions = new Set(
    policies.flatMap((p) =>
      p.Properties.PolicyDocument.Statement.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])),
    ),
  );
  expect(actions.size).toBeGreaterThan(10);
  for (const action of actions) expect(table).toContain(`\`${action.split(':')[1]}\``);
});
