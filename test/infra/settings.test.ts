import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULTS, readSettings } from '../../lib/settings';

const context = (values: Record<string, unknown>) => ({ tryGetContext: (key: string) => values[key] });

describe('readSettings', () => {
  it('defaults to the dev stage in Ireland with the documented runtime limits', () => {
    expect(readSettings(context({}))).toEqual({
      stage: 'dev',
      region: 'eu-west-1',
      corsAllowedOrigins: [],
      reservedConcurrency: undefined,
      provisionedConcurrency: undefined,
      logRetentionDays: undefined,
      functionLogRetention: RetentionDays.ONE_MONTH,
      memoryMb: DEFAULTS.memoryMb,
      upstreamTimeoutMs: 30_000,
      rateLimitPerMinute: 100,
      alarmTopicArn: undefined,
    });
  });

  it('reads -c strings and cdk.json numbers and lists alike', () => {
    const fromCli = readSettings(context({ reservedConcurrency: '5', corsAllowedOrigins: 'https://a.example.com,http://b.example.com:8443' }));
    const fromJson = readSettings(context({ reservedConcurrency: 5, corsAllowedOrigins: ['https://a.example.com', 'http://b.example.com:8443'] }));
    expect(fromCli).toEqual(fromJson);
    expect(fromCli.corsAllowedOrigins).toEqual(['https://a.example.com', 'http://b.example.com:8443']);
  });

  it.each([
    ['stage', 'Prod', /stage/],
    ['stage', 'a-very-long-stage-name-indeed', /stage/],
    ['region', 'ireland', /region/],
    ['reservedConcurrency', '0', /reservedConcurrency/],
    ['provisionedConcurrency', 'two', /provisionedConcurrency/],
    ['memoryMb', '64', /memoryMb/],
    ['functionLogRetentionDays', '10', /functionLogRetentionDays/],
    ['corsAllowedOrigins', 'https://app.example.com/', /corsAllowedOrigins/],
    ['corsAllowedOrigins', 'app.example.com', /corsAllowedOrigins/],
    ['alarmTopicArn', 'ops-alerts', /alarmTopicArn/],
  ])('rejects %s=%j with a message naming the key', (key, value, message) => {
    expect(() => readSettings(context({ [key]: value }))).toThrow(message);
  });
});
