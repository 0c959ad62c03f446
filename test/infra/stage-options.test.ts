import { TABLES } from '../../lambda/store/tables';
import { single, synthesize, type SynthesizedStack } from './support/synth';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ops-alerts';

/** The operator's context switches, applied all at once to one (unbundled) synthesis. */
let synth: SynthesizedStack;
beforeAll(() => {
  synth = synthesize(
    {
      stage: 'prod',
      region: 'eu-central-1',
      corsAllowedOrigins: 'https://app.example.com, https://admin.example.com',
      reservedConcurrency: '20',
      provisionedConcurrency: '2',
      logRetentionDays: '90',
      functionLogRetentionDays: '365',
      memoryMb: '512',
      alarmTopicArn: TOPIC,
      alarmEmail: 'ops@example.com',
    },
    { bundle: false },
  );
});
afterAll(() => synth?.cleanup());

it('names the stack and every named resource after the stage, in the chosen region', () => {
  expect(synth.stack.stackName).toBe('prod-ai-usage-proxy');
  expect(synth.stack.region).toBe('eu-central-1');
  for (const shape of Object.values(TABLES)) {
    synth.template.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: `prod-ai-usage-proxy-${shape.logicalName}`,
    });
  }
  synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'prod-ai-usage-proxy-function' });
  synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'prod-ai-usage-proxy-stats-consumer' });
  synth.template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/prod-ai-usage-proxy-provider-keys' });
});

it('passes the production origins and usage-row retention to the runtime', () => {
  const fn = single(synth.template, 'AWS::Lambda::Function', (p) => p.FunctionName === 'prod-ai-usage-proxy-function');
  const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  expect(env.CORS_ALLOWED_ORIGINS).toBe('https://app.example.com,https://admin.example.com');
  expect(env.LOG_RETENTION_DAYS).toBe('90');
  expect(fn.Properties.MemorySize).toBe(512);
  synth.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
});

it('reserves concurrency on the function and serves the URL from a provisioned alias', () => {
  const fn = single(synth.template, 'AWS::Lambda::Function', (p) => p.FunctionName === 'prod-ai-usage-proxy-function');
  expect(fn.Properties.ReservedConcurrentExecutions).toBe(20);
  const alias = single(synth.template, 'AWS::Lambda::Alias');
  expect(alias.Properties).toMatchObject({
    Name: 'live',
    ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 },
  });
  const url = single(synth.template, 'AWS::Lambda::Url');
  expect(url.Properties).toMatchObject({
    InvokeMode: 'RESPONSE_STREAM',
    TargetFunctionArn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] },
    Qualifier: 'live',
  });
});

it('sends every alarm to the operator topic', () => {
  const alarms = Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')) as {
    Properties: Record<string, unknown>;
  }[];
  expect(alarms.length).toBeGreaterThan(0);
  for (const a of alarms) expect(a.Properties.AlarmActions).toEqual([TOPIC]);
  // The given topic replaces the stack's own alarm topic (the budget-alert topic is another); the e-mail address is subscribed to it.
  expect(
    Object.values(synth.template.findResources('AWS::SNS::Topic')).filter((r) =>
      String((r as { Properties: { TopicName?: string } }).Properties.TopicName).endsWith('-alarms'),
    ),
  ).toHaveLength(0);
  synth.template.hasResourceProperties('AWS::SNS::Subscription', {
    Protocol: 'email',
    Endpoint: 'ops@example.com',
    TopicArn: TOPIC,
  });
});

it("subscribes the e-mail address to the stack's own topic when no topic is given", () => {
  const own = synthesize({ stage: 'ops', alarmEmail: 'ops@example.com' }, { bundle: false });
  try {
    const topic = single(own.template, 'AWS::SNS::Topic', (properties) =>
      String(properties.TopicName).endsWith('-alarms'),
    );
    own.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topic.logicalId },
    });
    const alarms = Object.values(own.template.findResources('AWS::CloudWatch::Alarm')) as {
      Properties: Record<string, unknown>;
    }[];
    for (const a of alarms) expect(a.Properties.AlarmActions).toEqual([{ Ref: topic.logicalId }]);
  } finally {
    own.cleanup();
  }
});
