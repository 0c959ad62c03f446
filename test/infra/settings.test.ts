import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULTS, readSettings } from '../../lib/settings';

const context = (values: Record<string, unknown>) => ({ tryGetContext: (key: string) => values[key] });

describe('readSettings', () => {
  it('defaults to the dev stage in Ireland with the documented runtime limits', () => {
    expect(readSettings(context({}))).toEqual({
      stage: 'dev',
      region: 'eu-west-1',
      corsAllowedOrigins: [],
      reservedConcurrency: 50,
      provisionedConcurrency: undefined,
      logRetentionDays: DEFAULTS.logRetentionDays,
      consumerWindowSeconds: DEFAULTS.consumerWindowSeconds,
      functionLogRetention: RetentionDays.ONE_MONTH,
      memoryMb: DEFAULTS.memoryMb,
      upstreamTimeoutMs: 30_000,
      rateLimitPerMinute: 100,
      alarmTopicArn: undefined,
      alarmEmail: undefined,
      bedrockRegion: 'eu-west-1',
      usageExportDays: DEFAULTS.usageExportDays,
    });
  });

  it('keeps usage rows 90 days unless told a number of days, or none (forever)', () => {
    expect(DEFAULTS.logRetentionDays).toBe(90);
    expect(readSettings(context({ logRetentionDays: '400' })).logRetentionDays).toBe(400);
    expect(readSettings(context({ logRetentionDays: 'none' })).logRetentionDays).toBeUndefined();
    expect(() => readSettings(context({ logRetentionDays: 'forever' }))).toThrow('"logRetentionDays"');
  });

  it("sets the stream consumer's batching window within Lambda's limit of 300 s", () => {
    expect(readSettings(context({ consumerWindowSeconds: '10' })).consumerWindowSeconds).toBe(10);
    expect(() => readSettings(context({ consumerWindowSeconds: '301' }))).toThrow('"consumerWindowSeconds"');
  });

  it("calls Bedrock in the stack's region unless bedrockRegion names another", () => {
    expect(readSettings(context({ region: 'eu-central-1' })).bedrockRegion).toBe('eu-central-1');
    expect(readSettings(context({ region: 'eu-central-1', bedrockRegion: 'us-east-1' })).bedrockRegion).toBe(
      'us-east-1',
    );
  });

  it('caps concurrency at 50 unless told a number, or none', () => {
    expect(readSettings(context({})).reservedConcurrency).toBe(DEFAULTS.reservedConcurrency);
    expect(readSettings(context({ reservedConcurrency: '200' })).reservedConcurrency).toBe(200);
    expect(readSettings(context({ reservedConcurrency: 'none' })).reservedConcurrency).toBeUndefined();
  });

  it('reads an e-mail address for the alarm topic', () => {
    expect(readSettings(context({ alarmEmail: 'ops@example.com' })).alarmEmail).toBe('ops@example.com');
  });

  it('reads -c strings and cdk.json numbers and lists alike', () => {
    const fromCli = readSettings(
      context({ reservedConcurrency: '5', corsAllowedOrigins: 'https://a.example.com,http://b.example.com:8443' }),
    );
    const fromJson = readSettings(
      context({ reservedConcurrency: 5, corsAllowedOrigins: ['https://a.example.com', 'http://b.example.com:8443'] }),
    );
    expect(fromCli).toEqual(fromJson);
    expect(fromCli.corsAllowedOrigins).toEqual(['https://a.example.com', 'http://b.example.com:8443']);
  });

  it.each([
    ['stage', 'Prod', /stage/],
    ['stage', 'a-very-long-stage-name-indeed', /stage/],
    ['region', 'ireland', /region/],
    ['bedrockRegion', 'us-east', /bedrockRegion/],
    ['reservedConcurrency', '0', /reservedConcurrency/],
    ['provisionedConcurrency', 'two', /provisionedConcurrency/],
    ['memoryMb', '64', /memoryMb/],
    ['functionLogRetentionDays', '10', /functionLogRetentionDays/],
    ['corsAllowedOrigins', 'https://app.example.com/', /corsAllowedOrigins/],
    ['corsAllowedOrigins', 'app.example.com', /corsAllowedOrigins/],
    ['alarmTopicArn', 'ops-alerts', /alarmTopicArn/],
    ['alarmEmail', 'ops at example', /alarmEmail/],
    ['reservedConcurrency', 'off', /reservedConcurrency.*"none"/],
  ])('rejects %s=%j with a message naming the key', (key, value, message) => {
    expect(() => readSettings(context({ [key]: value }))).toThrow(message);
  });

  it('refuses more provisioned instances than reserved ones, which Lambda would refuse at deploy time', () => {
    expect(() => readSettings(context({ provisionedConcurrency: '60' }))).toThrow(
      /provisionedConcurrency.*reservedConcurrency/,
    );
    expect(
      readSettings(context({ provisionedConcurrency: '60', reservedConcurrency: 'none' })).provisionedConcurrency,
    ).toBe(60);
  });

  it('reads the sign-in: a Cognito pool, or an issuer with its client and secret, never half of one', () => {
    expect(readSettings(context({ cognitoSignIn: 'true' })).signIn).toEqual({ kind: 'cognito' });
    const secret = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:proxy-oidc-AbCdEf';
    expect(
      readSettings(
        context({ oidcIssuer: 'https://login.example.com', oidcClientId: 'proxy', oidcClientSecretArn: secret }),
      ).signIn,
    ).toEqual({ kind: 'oidc', issuer: 'https://login.example.com', clientId: 'proxy', clientSecretArn: secret });
    expect(() => readSettings(context({ oidcIssuer: 'https://login.example.com' }))).toThrow(/oidcClientId/);
    expect(() =>
      readSettings(context({ oidcIssuer: 'http://login.example.com', oidcClientId: 'p', oidcClientSecretArn: secret })),
    ).toThrow(/https/);
    expect(() =>
      readSettings(
        context({ oidcIssuer: 'https://login.example.com', oidcClientId: 'p', oidcClientSecretArn: 'secret' }),
      ),
    ).toThrow(/oidcClientSecretArn/);
    expect(() => readSettings(context({ cognitoSignIn: 'true', oidcIssuer: 'https://login.example.com' }))).toThrow(
      /exclude each other/,
    );
  });
});
