/**
 * The public URL never moves: whatever the context switches say (provisioned instances on or off,
 * memory, cap, timeouts, alarms), the function URL resource keeps its logical id and properties,
 * so CloudFormation updates around it and never replaces it (a replaced URL gets a new hostname).
 * docs/deploy.md, "What a setting changes".
 */
import { single, synthesize, type SynthesizedStack } from './support/synth';

/** Each switch that leaves the stage and region alone, one at a time and all at once. */
const variants: [string, Record<string, unknown>][] = [
  ['provisionedConcurrency=2', { provisionedConcurrency: 2 }],
  ['reservedConcurrency=none', { reservedConcurrency: 'none' }],
  ['reservedConcurrency=200', { reservedConcurrency: 200 }],
  ['memoryMb=512', { memoryMb: 512 }],
  ['upstreamTimeoutMs=60000', { upstreamTimeoutMs: 60_000 }],
  ['rateLimitPerMinute=10', { rateLimitPerMinute: 10 }],
  ['corsAllowedOrigins', { corsAllowedOrigins: 'https://app.example.com' }],
  ['logRetentionDays=30', { logRetentionDays: 30 }],
  ['functionLogRetentionDays=365', { functionLogRetentionDays: 365 }],
  ['alarmEmail', { alarmEmail: 'ops@example.com' }],
  ['usageExportDays=90', { usageExportDays: 90 }],
  ['alarmTopicArn', { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' }],
  [
    'all of them',
    {
      provisionedConcurrency: 2,
      reservedConcurrency: 20,
      memoryMb: 512,
      upstreamTimeoutMs: 60_000,
      alarmEmail: 'ops@example.com',
      logRetentionDays: 30,
    },
  ],
];

const urlOf = (synth: SynthesizedStack) => {
  const url = single(synth.template, 'AWS::Lambda::Url');
  const permissions = Object.entries(synth.template.findResources('AWS::Lambda::Permission')).sort(([a], [b]) =>
    a.localeCompare(b),
  );
  const fn = single(synth.template, 'AWS::Lambda::Function', (p) => String(p.FunctionName).endsWith('-function'));
  return { url: { logicalId: url.logicalId, Properties: url.Properties }, permissions, functionId: fn.logicalId };
};

let base: SynthesizedStack;
beforeAll(() => {
  base = synthesize({}, { bundle: false });
});
afterAll(() => base?.cleanup());

it('serves the URL from the live alias from the first deploy on', () => {
  const { url, functionId } = urlOf(base);
  expect(url.Properties).toEqual({
    AuthType: 'NONE',
    InvokeMode: 'RESPONSE_STREAM',
    TargetFunctionArn: { 'Fn::GetAtt': [functionId, 'Arn'] },
    Qualifier: 'live',
  });
  const alias = single(base.template, 'AWS::Lambda::Alias');
  expect(alias.Properties).toMatchObject({ Name: 'live', FunctionName: { Ref: functionId } });
  expect(alias.Properties.ProvisionedConcurrencyConfig).toBeUndefined();
});

it.each(variants)('%s: the same URL resource, permissions and function, so the hostname stays', (_name, context) => {
  const other = synthesize(context, { bundle: false });
  try {
    expect(urlOf(other)).toEqual(urlOf(base));
    // Provisioned instances change the alias in place: same logical id, same name.
    expect(single(other.template, 'AWS::Lambda::Alias').logicalId).toBe(
      single(base.template, 'AWS::Lambda::Alias').logicalId,
    );
  } finally {
    other.cleanup();
  }
});
