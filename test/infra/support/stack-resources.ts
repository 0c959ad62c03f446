import type { TableShape } from '../../../lambda/store/tables';
import { single, synthesize, type SynthesizedStack } from './synth';

type Template = Parameters<typeof single>[0];

/** The stack's resources a test names, found in the template `template()` returns when called. */
export function stackResources(template: () => Template) {
  return {
    table: (shape: TableShape) =>
      single(template(), 'AWS::DynamoDB::Table', (p) => p.TableName === `dev-ai-usage-proxy-${shape.logicalName}`),
    fn: () => single(template(), 'AWS::Lambda::Function', (p) => p.FunctionName === 'dev-ai-usage-proxy-function'),
    consumer: () =>
      single(template(), 'AWS::Lambda::Function', (p) => p.FunctionName === 'dev-ai-usage-proxy-stats-consumer'),
    roleOf: (f: { Properties: Record<string, unknown> }) =>
      (f.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
    key: () => single(template(), 'AWS::KMS::Key', (p) => String(p.Description).startsWith('Wraps the data keys')),
    secret: () => single(template(), 'AWS::SecretsManager::Secret'),
    alarmTopic: () => single(template(), 'AWS::SNS::Topic', (p) => p.TopicName === 'dev-ai-usage-proxy-alarms'),
    alertTopic: () => single(template(), 'AWS::SNS::Topic', (p) => p.TopicName === 'dev-ai-usage-proxy-budget-alerts'),
  };
}

/**
 * The default stack, synthesized and bundled once for the whole file (bundling is the slow part)
 * before its tests and cleaned up after them, with the finders above over its template.
 */
export function defaultStack() {
  const stack = {} as { synth: SynthesizedStack };
  beforeAll(() => {
    stack.synth = synthesize();
  });
  afterAll(() => stack.synth?.cleanup());
  return { stack, ...stackResources(() => stack.synth.template) };
}
