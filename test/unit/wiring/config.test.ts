import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../lambda/wiring/config';
import { bannerLines } from '../../../lambda/local/banner';
import { PROVIDER_CATALOG } from '../../../lambda/providers/catalog';
import {
  PROVIDERS,
  providerById,
  providerByRoute,
  upstreamUrl,
  type ProviderId,
} from '../../../lambda/providers/registry';

describe('loadConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      dataDir: '.data',
      upstreamTimeoutMs: 30_000,
      rateLimitPerMinute: 100,
      corsAllowedOrigins: [],
    });
    expect(config.dynamoEndpoint).toBeUndefined();
    expect(config.kmsKeyId).toBeUndefined();
    expect(config.pricingFile).toBeUndefined();
    expect(config.adminKey).toBeUndefined();
  });

  it('reads every variable it is given', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/proxy',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      UPSTREAM_TIMEOUT_MS: '1500',
      RATE_LIMIT_PER_MINUTE: '5',
      CORS_ALLOWED_ORIGINS: ' https://dash.example.com , https://admin.example.org,, ',
      PRICING_FILE: 'prices.json',
      KMS_KEY_ID: 'alias/proxy',
      ADMIN_KEY: 'a-long-enough-admin-key',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      dataDir: '/var/lib/proxy',
      dynamoEndpoint: 'http://127.0.0.1:8000',
      upstreamTimeoutMs: 1500,
      rateLimitPerMinute: 5,
      corsAllowedOrigins: ['https://dash.example.com', 'https://admin.example.org'],
      pricingFile: 'prices.json',
      kmsKeyId: 'alias/proxy',
      adminKey: 'a-long-enough-admin-key',
    });
  });

  it('an empty variable counts as unset', () => {
    const names = [
      'PORT',
      'HOST',
      'DATA_DIR',
      'DYNAMODB_ENDPOINT',
      'ADMIN_KEY',
      'UPSTREAM_TIMEOUT_MS',
      'RATE_LIMIT_PER_MINUTE',
      'CORS_ALLOWED_ORIGINS',
      'PRICING_FILE',
    ];
    const config = loadConfig(Object.fromEntries(names.map((name) => [name, ''])));
    expect(config).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      dataDir: '.data',
      upstreamTimeoutMs: 30_000,
      rateLimitPerMinute: 100,
      corsAllowedOrigins: [],
    });
    expect(config.dynamoEndpoint).toBeUndefined();
    expect(config.adminKey).toBeUndefined();
    expect(config.pricingFile).toBeUndefined();
  });

  const bad: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '70000'],
    ['UPSTREAM_TIMEOUT_MS', '0'],
    ['UPSTREAM_TIMEOUT_MS', '1.5'],
    ['UPSTREAM_TIMEOUT_MS', '30s'],
    ['RATE_LIMIT_PER_MINUTE', '0'],
    ['RATE_LIMIT_PER_MINUTE', 'many'],
    ['DYNAMODB_ENDPOINT', 'not a url'],
    ['ADMIN_KEY', 'short'],
    ['LOG_RETENTION_DAYS', 'forever'],
    ['PROVIDER_KEY_CACHE_SECONDS', '1.5'],
    ['PROVIDER_KEY_CACHE_SECONDS', '301'],
    ['FAILED_SIGN_IN_MAX_DELAY_MS', '2s'],
    ['FAILED_SIGN_IN_MAX_DELAY_MS', '60001'],
    ['UPSTREAM_BASE_URL_PROV_B', 'api.openai.com/v1'],
    ['UPSTREAM_BASE_URL_PROV_A', 'ftp://127.0.0.1:9001'],
  ];

  it('PROVIDER_KEY_CACHE_SECONDS: 30 s by default, 0 keeps no copy', () => {
    expect(loadConfig({}).providerKeyCacheMs).toBe(30_000);
    expect(loadConfig({ PROVIDER_KEY_CACHE_SECONDS: '0' }).providerKeyCacheMs).toBe(0);
    expect(loadConfig({ PROVIDER_KEY_CACHE_SECONDS: '5' }).providerKeyCacheMs).toBe(5_000);
  });

  it('FAILED_SIGN_IN_MAX_DELAY_MS: 2 s by default, 0 holds no failed sign-in', () => {
    expect(loadConfig({}).failedSignInMaxDelayMs).toBe(2_000);
    expect(loadConfig({ FAILED_SIGN_IN_MAX_DELAY_MS: '0' }).failedSignInMaxDelayMs).toBe(0);
    expect(loadConfig({ FAILED_SIGN_IN_MAX_DELAY_MS: '500' }).failedSignInMaxDelayMs).toBe(500);
  });

  it('in Lambda no failed sign-in is held, whatever FAILED_SIGN_IN_MAX_DELAY_MS says: a held answer would hold an invocation', () => {
    expect(loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'proxy' }).failedSignInMaxDelayMs).toBe(0);
    expect(
      loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'proxy', FAILED_SIGN_IN_MAX_DELAY_MS: '2000' }).failedSignInMaxDelayMs,
    ).toBe(0);
  });

  it('FAILED_SIGN_INS_PER_MINUTE: 10 by default, 0 turns the throttle off, anything else but a count is refused', () => {
    expect(loadConfig({}).failedSignInsPerMinute).toBe(10);
    expect(loadConfig({ FAILED_SIGN_INS_PER_MINUTE: '0' }).failedSignInsPerMinute).toBe(0);
    expect(loadConfig({ FAILED_SIGN_INS_PER_MINUTE: '30' }).failedSignInsPerMinute).toBe(30);
    expect(() => loadConfig({ FAILED_SIGN_INS_PER_MINUTE: 'ten' })).toThrow(/FAILED_SIGN_INS_PER_MINUTE/);
  });

  it("signs AWS requests with the function's role in Lambda (AWS_LAMBDA_FUNCTION_NAME set), else with the machine's credential chain", () => {
    expect(loadConfig({}).awsSigning).toBe('local-credential-chain');
    expect(loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'ai-usage-proxy-function' }).awsSigning).toBe('aws-role');
  });

  it.each(bad)('%s=%p is refused with an error naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`Invalid configuration: .*${name}`));
  });
});

describe('provider registry', () => {
  const defaults: [ProviderId, string][] = [
    ['prov-a', 'https://api.anthropic.com/v1/messages'],
    ['prov-b', 'https://api.openai.com/v1/chat/completions'],
    ['prov-c', 'https://generativelanguage.googleapis.com/v1beta/openai/chat/completions'],
    ['prov-d', 'https://api.mistral.ai/v1/chat/completions'],
    ['prov-e', 'https://api.groq.com/openai/v1/chat/completions'],
  ];

  it('has exactly the six providers, each with its own env override', () => {
    expect(PROVIDERS.map((p) => p.id)).toEqual(['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e', 'bedrock']);
    for (const provider of PROVIDERS) {
      expect(provider.upstream.envVar).toBe(`UPSTREAM_BASE_URL_${provider.id.toUpperCase().replace('-', '_')}`);
    }
    expect(providerById('prov-f')).toBeUndefined();
  });

  it.each(defaults)('%s calls %s by default (README, "Use it from an SDK")', (id, url) => {
    expect(upstreamUrl(providerById(id)!, loadConfig({}).upstreams[id].baseUrl).href).toBe(url);
  });

  const overrides: [ProviderId, string, string][] = [
    ['prov-a', 'http://127.0.0.1:9001', 'http://127.0.0.1:9001/v1/messages'],
    ['prov-a', 'http://127.0.0.1:9001/', 'http://127.0.0.1:9001/v1/messages'],
    ['prov-b', 'http://127.0.0.1:9002/v1', 'http://127.0.0.1:9002/v1/chat/completions'],
    ['prov-b', 'http://127.0.0.1:9002/v1/', 'http://127.0.0.1:9002/v1/chat/completions'],
    ['prov-c', 'http://127.0.0.1:9003/v1beta/openai//', 'http://127.0.0.1:9003/v1beta/openai/chat/completions'],
    ['prov-d', 'https://mistral.internal.example/v1', 'https://mistral.internal.example/v1/chat/completions'],
    ['prov-e', 'http://localhost:11434/v1/', 'http://localhost:11434/v1/chat/completions'],
  ];

  it.each(overrides)('%s with its base set to %s calls %s', (id, base, url) => {
    const provider = providerById(id)!;
    expect(upstreamUrl(provider, loadConfig({ [provider.upstream.envVar]: base }).upstreams[id].baseUrl).href).toBe(
      url,
    );
  });

  it.each([
    ['the default region', {}, 'eu-west-1'],
    ["AWS_REGION (the function's own region)", { AWS_REGION: 'eu-central-1' }, 'eu-central-1'],
    ['BEDROCK_REGION over AWS_REGION', { AWS_REGION: 'eu-central-1', BEDROCK_REGION: 'us-east-1' }, 'us-east-1'],
    ['BEDROCK_REGION alone', { BEDROCK_REGION: 'ap-northeast-1' }, 'ap-northeast-1'],
  ])('Bedrock is reached and signed for in %s (docs/bedrock.md, "Region")', (_, env, region) => {
    const { bedrock } = loadConfig(env).upstreams;
    expect(bedrock).toEqual({
      baseUrl: `https://bedrock-runtime.${region}.amazonaws.com`,
      overridden: false,
      aws: { region, service: 'bedrock' },
    });
    expect(
      upstreamUrl(providerById('bedrock')!, bedrock.baseUrl, '/model/eu.anthropic.claude-sonnet-4-6/converse').href,
    ).toBe(`https://bedrock-runtime.${region}.amazonaws.com/model/eu.anthropic.claude-sonnet-4-6/converse`);
  });

  it('UPSTREAM_BASE_URL_BEDROCK replaces the base URL; requests are still signed for BEDROCK_REGION', () => {
    const { bedrock } = loadConfig({
      UPSTREAM_BASE_URL_BEDROCK: 'http://127.0.0.1:9006/',
      BEDROCK_REGION: 'us-west-2',
    }).upstreams;
    expect(bedrock).toEqual({
      baseUrl: 'http://127.0.0.1:9006',
      overridden: true,
      aws: { region: 'us-west-2', service: 'bedrock' },
    });
  });

  it('refuses a BEDROCK_REGION that is no region name', () => {
    expect(() => loadConfig({ BEDROCK_REGION: 'virginia' })).toThrow(/Invalid configuration: BEDROCK_REGION/);
  });

  it("one provider's override does not move another, and an empty override means the default", () => {
    const env = { UPSTREAM_BASE_URL_PROV_B: 'http://127.0.0.1:9002/v1', UPSTREAM_BASE_URL_PROV_C: '' };
    const { upstreams } = loadConfig(env);
    expect(upstreamUrl(providerById('prov-a')!, upstreams['prov-a'].baseUrl).href).toBe(
      'https://api.anthropic.com/v1/messages',
    );
    expect(upstreamUrl(providerById('prov-c')!, upstreams['prov-c'].baseUrl).href).toBe(
      'https://generativelanguage.googleapis.com/v1beta/openai/chat/completions',
    );
  });

  const routes: [string, ProviderId][] = [
    ['/v1/messages', 'prov-a'],
    ['/messages', 'prov-a'],
    ['/prov-a/v1/messages', 'prov-a'],
    ['/prov-b/v1/chat/completions', 'prov-b'],
    ['/prov-c/v1/chat/completions', 'prov-c'],
    ['/prov-d/v1/chat/completions', 'prov-d'],
    ['/prov-e/v1/chat/completions', 'prov-e'],
    ['/prov-b/chat/completions', 'prov-b'],
    ['/prov-c/chat/completions', 'prov-c'],
    ['/prov-d/chat/completions', 'prov-d'],
    ['/prov-e/chat/completions', 'prov-e'],
  ];

  it.each(routes)('%s reaches %s', (path, id) => {
    expect(providerByRoute(path)?.id).toBe(id);
  });

  it.each([
    '/v1/chat/completions',
    '/chat/completions',
    '/prov-b/v1/messages',
    '/prov-f/v1/chat/completions',
    '/v2/messages',
    '/',
    '',
  ])('%p reaches no provider', (path) => {
    expect(providerByRoute(path)).toBeUndefined();
  });

  it('credentials: x-api-key for prov-a, Bearer authorization for the others', () => {
    expect(providerById('prov-a')!.dialect.credential).toMatchObject({ header: 'x-api-key' });
    for (const id of ['prov-b', 'prov-c', 'prov-d', 'prov-e']) {
      expect(providerById(id)!.dialect.credential).toEqual({ header: 'authorization', scheme: 'Bearer' });
    }
  });
});

/**
 * docs/api.md ("Custom upstreams") names every provider's upstream variable, Bedrock's region
 * variable included, and each example line of it resolves as written (docs/operations.md's table
 * is rendered from the catalog: test/unit/doc-tables.test.ts); the start banner shows Bedrock's
 * override with its path template as written.
 */
describe('the upstream variables in docs/api.md', () => {
  const doc = (name: string) => readFileSync(join(__dirname, '../../../docs', name), 'utf8');
  const section = (text: string, heading: string) => {
    const from = text.indexOf(`\n## ${heading}\n`);
    expect(from).toBeGreaterThan(-1);
    const end = text.indexOf('\n## ', from + 1);
    return text.slice(from, end < 0 ? undefined : end);
  };
  const api = section(doc('api.md'), 'Custom upstreams');

  /** The variables a page names, the `UPSTREAM_BASE_URL_PROV_A` … `_E` range spelled out. */
  function named(text: string): Set<string> {
    const names = new Set(text.match(/\b[A-Z][A-Z0-9_]{3,}\b/g));
    const range = /`UPSTREAM_BASE_URL_PROV_([A-Z])` … `_([A-Z])`/.exec(text);
    if (range)
      for (let c = range[1]!.charCodeAt(0); c <= range[2]!.charCodeAt(0); c++)
        names.add(`UPSTREAM_BASE_URL_PROV_${String.fromCharCode(c)}`);
    return names;
  }

  it.each([['api.md', api]])(
    "%s names every provider's upstream override and region variable, and no other",
    (_, text) => {
      const expected = PROVIDER_CATALOG.flatMap((entry): string[] =>
        'aws' in entry.upstream ? [entry.upstream.aws.regionEnvVar, entry.upstream.envVar] : [entry.upstream.envVar],
      );
      const upstreamNames = [...named(text)].filter(
        (name) => name.startsWith('UPSTREAM_BASE_URL_') || name.endsWith('_REGION'),
      );
      expect(upstreamNames.filter((name) => name !== 'AWS_REGION').sort()).toEqual([...new Set(expected)].sort());
    },
  );

  it("each of api.md's example overrides resolves to the endpoint it shows", () => {
    const lines = [...api.matchAll(/^(UPSTREAM_BASE_URL_\w+)=(\S+)\s+# → (\S+)/gm)];
    expect(lines.map((line) => line[1])).toEqual([
      'UPSTREAM_BASE_URL_PROV_A',
      'UPSTREAM_BASE_URL_PROV_B',
      'UPSTREAM_BASE_URL_BEDROCK',
    ]);
    for (const [, name, value, shown] of lines) {
      const entry = PROVIDER_CATALOG.find((e) => e.upstream.envVar === name)!;
      const provider = providerById(entry.id as ProviderId)!;
      const resolved = decodeURI(
        upstreamUrl(provider, loadConfig({ [name!]: value }).upstreams[provider.id].baseUrl).href,
      );
      expect(resolved.replace('{model}', '{modelId}')).toBe(shown);
    }
  });

  it('the banner shows the Bedrock override with its path template as written', () => {
    const lines = bannerLines({
      base: 'http://127.0.0.1:8787',
      config: loadConfig({ UPSTREAM_BASE_URL_BEDROCK: 'http://127.0.0.1:9006' }),
      ownStore: true,
      admin: { key: 'k', generated: false },
      firstAccount: { accountId: 'acct', reason: 'shown-before' },
    });
    expect(lines).toContain(
      '  upstream bedrock:  http://127.0.0.1:9006/model/{model}/converse   (UPSTREAM_BASE_URL_BEDROCK)',
    );
  });
});
