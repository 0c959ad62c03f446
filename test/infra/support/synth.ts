import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addProxyStack } from '../../../lib/proxy-app';
import type { ProxyStack } from '../../../lib/proxy-stack';

export const PROJECT_ROOT = path.resolve(__dirname, '../../..');

/** The feature flags and CLI settings of cdk.json, so the tests synthesize what `cdk synth` does. */
export function cdkJson(): { app: string; notices?: boolean; context: Record<string, unknown> } {
  return JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8'));
}

export interface SynthesizedStack {
  app: App;
  stack: ProxyStack;
  template: Template;
  outdir: string;
  cleanup(): void;
}

/**
 * Builds the app the way bin/app.ts does, into a temporary cloud assembly directory.
 * `bundle: false` skips esbuild (the asset is a placeholder) for tests that only read the template.
 * CDK's built-in CloudFormation rule check is left to the `cdk synth` test, which runs it for
 * real: here it would only add seconds per synthesis to tests that assert on the template anyway.
 */
export function synthesize(
  context: Record<string, unknown> = {},
  options: { bundle?: boolean } = {},
): SynthesizedStack {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-usage-proxy-cdk-'));
  const app = new App({
    outdir,
    builtinCloudFormationValidation: false,
    context: {
      ...cdkJson().context,
      ...context,
      ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
    },
  });
  const stack = addProxyStack(app, PROJECT_ROOT);
  const template = Template.fromStack(stack);
  return { app, stack, template, outdir, cleanup: () => fs.rmSync(outdir, { recursive: true, force: true }) };
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }>;

/** The one resource of a type matching `filter`, with its logical id; fails when there isn't exactly one. */
export function single(
  template: Template,
  type: string,
  filter: (props: Record<string, unknown>) => boolean = () => true,
) {
  const found = Object.entries(template.findResources(type) as Resources).filter(([, r]) => filter(r.Properties ?? {}));
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  const [logicalId, resource] = found[0];
  return { logicalId, ...resource, Properties: resource.Properties ?? {} };
}

export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, unknown>;
}

/** Every statement of every identity policy in the template. */
export function policyStatements(template: Template): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy') as Resources).flatMap(
    (p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement,
  );
}

/** The statements of the identity policies attached to one role. */
export function roleStatements(template: Template, roleLogicalId: string): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy') as Resources)
    .filter((p) => JSON.stringify(p.Properties?.Roles) === JSON.stringify([{ Ref: roleLogicalId }]))
    .flatMap((p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}
