/**
 * The facts docs/deploy.md states about the stack, rendered from their one source: the permissions
 * from lib/permissions.ts, the alarms from the synthesized template, the cost from
 * lib/cost-model.ts. `npm run docs:deploy` writes them between the page's markers;
 * test/infra/deploy-docs.test.ts fails when the page and the sources disagree.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { namePrefix } from '../lib/names';
import { declaredGrants } from '../lib/permissions';
import type { ProxyStack } from '../lib/proxy-stack';

export type Facts = Record<string, string>;

const code = (name: string) => `\`${name}\``;

function permissionsTable(stack: ProxyStack): string {
  const rows = declaredGrants(stack.settings).map((g) => {
    const service = g.actions[0].split(':')[0];
    const actions = g.actions.map((a) => (a.startsWith(`${service}:`) ? a.slice(service.length + 1) : a));
    return `| ${g.role} | ${g.resourceName} | ${service}: ${actions.map(code).join(', ')} | ${g.usedFor} |`;
  });
  return ['| role | resource | actions | used for |', '|---|---|---|---|', ...rows].join('\n');
}

interface AlarmProperties {
  AlarmName: string;
  AlarmDescription: string;
  Threshold: number;
  EvaluationPeriods: number;
  Period?: number;
  MetricName?: string;
  Metrics?: { Id: string; ReturnData?: boolean; MetricStat?: { Period: number } }[];
}

/** The alarms as the synthesized template defines them: name, threshold and window, and what it means. */
function alarmTable(stack: ProxyStack): string {
  const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, { Type: string; Properties: AlarmProperties }> };
  const prefix = namePrefix(stack.settings.stage);
  const rows = Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
    .map(({ Properties: p }) => {
      const period = p.Period ?? p.Metrics?.find((m) => m.MetricStat)?.MetricStat?.Period ?? 0;
      const window = `${(period * p.EvaluationPeriods) / 60} min`;
      const unit = p.MetricName === 'Duration' ? ' ms' : '';
      return `| \`${p.AlarmName.replace(prefix, '')}\` | ≥ ${p.Threshold}${unit} over ${window} | ${p.AlarmDescription} |`;
    });
  return [`${rows.length} alarms (\`<stage>-ai-usage-proxy-\` + name):`, '', '| alarm | fires at | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Every block of facts, by marker name. */
export function renderDeployFacts(stack: ProxyStack): Facts {
  return { permissions: permissionsTable(stack), alarms: alarmTable(stack) };
}

const marker = (name: string, end: 'start' | 'end') => `<!-- deploy-facts:${name}:${end} -->`;

/** The text between a block's markers; undefined when the page lacks them. */
export function factsIn(markdown: string, name: string): string | undefined {
  const from = markdown.indexOf(marker(name, 'start'));
  const to = markdown.indexOf(marker(name, 'end'));
  if (from < 0 || to < from) return undefined;
  return markdown.slice(from + marker(name, 'start').length, to).replace(/^\n|\n$/g, '');
}

export function withFacts(markdown: string, facts: Facts): string {
  let out = markdown;
  for (const [name, text] of Object.entries(facts)) {
    if (factsIn(out, name) === undefined) throw new Error(`docs/deploy.md has no ${marker(name, 'start')} … ${marker(name, 'end')} block`);
    const from = out.indexOf(marker(name, 'start')) + marker(name, 'start').length;
    out = `${out.slice(0, from)}\n${text}\n${out.slice(out.indexOf(marker(name, 'end')))}`;
  }
  return out;
}
