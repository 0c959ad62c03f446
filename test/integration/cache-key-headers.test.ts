/**
 * What the provider receives besides the body's values is part of the cache key too (docs/caching.md,
 * "The key" and "Headers"), through the official SDKs against the fakes: a header that reaches the
 * provider, the query string, Responses' `store`, and a number as the body writes it. Each case is a question the
 * provider could answer differently (or refuse), so the second request goes upstream, as sent.
 */
import Anthropic from '@anthropic-ai/sdk';
import { InvokeModelCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { BEDROCK_MODEL, bedrockClient } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(async () => {
  await proxy?.stop();
});

const cacheOn = { 'x-proxy-cache': 'true' };
const unique = () => `header key ${randomBytes(6).toString('hex')}`;

describe('Anthropic: `anthropic-beta` is part of the question', () => {
  const anthropic = () =>
    new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0, defaultHeaders: cacheOn });
  const fake = () => proxy.fakes.fakes['prov-a'];

  async function ask(body: Anthropic.MessageCreateParamsNonStreaming, beta?: string) {
    const { response } = await anthropic()
      .messages.create(body, beta ? { headers: { 'anthropic-beta': beta } } : undefined)
      .withResponse();
    return { cache: response.headers.get('x-proxy-cache'), upstream: fake().requests.at(-1)! };
  }

  it('a request with a beta does not hit the entry of the same body without it, and the provider sees the beta', async () => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: unique() }],
    };
    expect((await ask(body)).cache).toBe('MISS');
    expect((await ask(body)).cache).toBe('HIT');
    const calls = fake().requests.length;
    const withBeta = await ask(body, 'context-1m-2025-08-07');
    expect(withBeta.cache).toBe('MISS');
    expect(fake().requests.length).toBe(calls + 1);
    expect(withBeta.upstream.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect((await ask(body, 'context-1m-2025-08-07')).cache).toBe('HIT');
  });

  it('a body that needs a beta, sent without it, goes to the provider (which would refuse it) instead of hitting', async () => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: unique() }],
      output_format: { type: 'json_schema', schema: { type: 'object' } },
    } as Anthropic.MessageCreateParamsNonStreaming;
    expect((await ask(body, 'structured-outputs-2025-11-13')).cache).toBe('MISS');
    const calls = fake().requests.length;
    const without = await ask(body);
    expect(without.cache).toBe('MISS');
    expect(fake().requests.length).toBe(calls + 1);
    expect(without.upstream.headers['anthropic-beta']).toBeUndefined();
  });

  it('telemetry the SDK sends differently on every call (retry count, timeout) still hits', async () => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: unique() }],
    };
    expect((await ask(body)).cache).toBe('MISS');
    const { response } = await new Anthropic({
      baseURL: proxy.proxyBase,
      apiKey: proxy.account.token,
      maxRetries: 0,
      timeout: 123_000,
      defaultHeaders: {
        ...cacheOn,
        'user-agent': 'another-client/9.9',
        traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`,
      },
    }).messages
      .create(body)
      .withResponse();
    expect(response.headers.get('x-proxy-cache')).toBe('HIT');
  });
});

describe('OpenAI: organization, project and accept', () => {
  const openai = (options: { organization?: string; project?: string } = {}) =>
    new OpenAI({
      baseURL: `${proxy.proxyBase}/prov-b/v1`,
      apiKey: proxy.account.token,
      maxRetries: 0,
      defaultHeaders: cacheOn,
      ...options,
    });
  const status = async (
    client: OpenAI,
    messages: OpenAI.ChatCompletionMessageParam[],
    headers?: Record<string, string>,
  ) =>
    (
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages }, { headers }).withResponse()
    ).response.headers.get('x-proxy-cache');

  it.each([
    ['openai-organization', { organization: 'org-one' }, { organization: 'org-two' }],
    ['openai-project', { project: 'proj-one' }, { project: 'proj-two' }],
  ] as const)('another `%s` is another question', async (header, one, two) => {
    const messages = [{ role: 'user' as const, content: unique() }];
    expect(await status(openai(one), messages)).toBe('MISS');
    expect(await status(openai(one), messages)).toBe('HIT');
    expect(await status(openai(two), messages)).toBe('MISS');
    expect(proxy.fakes.fakes['prov-b'].requests.at(-1)!.headers[header]).toBe(Object.values(two)[0]);
    expect(await status(openai(), messages)).toBe('MISS');
  });

  it('another `accept` is another question', async () => {
    const messages = [{ role: 'user' as const, content: unique() }];
    expect(await status(openai(), messages)).toBe('MISS');
    expect(await status(openai(), messages, { accept: 'application/json, text/plain' })).toBe('MISS');
    expect(await status(openai(), messages, { accept: 'application/json, text/plain' })).toBe('HIT');
  });

  it('Responses: `store: false` and `store: true` are two questions (a stored id must be one the provider kept)', async () => {
    const client = openai();
    const fake = proxy.fakes.fakes['prov-b'];
    const input = unique();
    const ask = async (store: boolean) =>
      (
        await client.responses.create({ model: 'gpt-4.1-2025-04-14', input, store }).withResponse()
      ).response.headers.get('x-proxy-cache');
    expect(await ask(false)).toBe('MISS');
    const calls = fake.requests.length;
    expect(await ask(true)).toBe('MISS');
    expect(fake.requests.length).toBe(calls + 1);
    expect((fake.requests.at(-1)!.json as { store: unknown }).store).toBe(true);
    expect(await ask(true)).toBe('HIT');
  });

  it('integers beyond 2^53 are keyed as written: seed 9007199254740993 does not hit seed 9007199254740992', async () => {
    // A JavaScript number cannot hold 9007199254740993: the body goes as text, as a Python client would write it.
    const client = openai();
    const content = unique();
    const ask = async (seed: string) => {
      const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"${content}"}],"seed":${seed}}`;
      const { response } = await client
        .post('/chat/completions', { body, headers: { 'content-type': 'application/json' } })
        .withResponse();
      await response.arrayBuffer().catch(() => undefined);
      return { cache: response.headers.get('x-proxy-cache'), sent: proxy.fakes.fakes['prov-b'].requests.at(-1)!.body };
    };
    expect((await ask('9007199254740993')).cache).toBe('MISS');
    const second = await ask('9007199254740992');
    expect(second.cache).toBe('MISS');
    expect(second.sent).toContain('"seed":9007199254740992');
    expect((await ask('9007199254740993')).cache).toBe('HIT');
    expect((await ask('9007199254740992')).cache).toBe('HIT');
  });
});

describe('Bedrock InvokeModel: guardrail and trace headers are part of the question', () => {
  /** Each request's `x-proxy-cache` answer, read off the responses the client received. */
  function withCacheStatus(client: BedrockRuntimeClient): string[] {
    const seen: string[] = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        seen.push(String((result.response as { headers: Record<string, string> }).headers['x-proxy-cache']));
        return result;
      },
      { step: 'deserialize', name: 'cacheStatus' },
    );
    return seen;
  }

  it('a request with a guardrail and trace does not hit the entry of one without, and the provider sees them', async () => {
    const client = bedrockClient(proxy.proxyBase, proxy.account.token, cacheOn);
    const seen = withCacheStatus(client);
    const body = JSON.stringify({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 100,
      messages: [{ role: 'user', content: unique() }],
    });
    const plain = new InvokeModelCommand({ modelId: BEDROCK_MODEL, body });
    const guarded = new InvokeModelCommand({
      modelId: BEDROCK_MODEL,
      body,
      guardrailIdentifier: 'gr-abc123',
      guardrailVersion: '1',
      trace: 'ENABLED',
    });
    await client.send(plain);
    // Another call of the SDK (a new invocation id) with the same question hits.
    await client.send(plain);
    const calls = proxy.fakes.bedrock.requests.length;
    await client.send(guarded);
    expect(proxy.fakes.bedrock.requests.length).toBe(calls + 1);
    const upstream = proxy.fakes.bedrock.requests.at(-1)!.headers;
    expect(upstream['x-amzn-bedrock-guardrailidentifier']).toBe('gr-abc123');
    expect(upstream['x-amzn-bedrock-guardrailversion']).toBe('1');
    expect(upstream['x-amzn-bedrock-trace']).toBe('ENABLED');
    await client.send(guarded);
    expect(seen).toEqual(['MISS', 'HIT', 'MISS', 'HIT']);
  });
});

describe('the query string is part of the question: the second of each pair is a MISS the provider answers', () => {
  it("Anthropic: `/v1/messages?beta=true` (what earlier SDKs' beta client sends), then the same body without it", async () => {
    const anthropic = new Anthropic({
      baseURL: proxy.proxyBase,
      apiKey: proxy.account.token,
      maxRetries: 0,
      defaultHeaders: cacheOn,
    });
    const fake = proxy.fakes.fakes['prov-a'];
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: unique() }],
    };
    const asBeta = () => anthropic.messages.create(body, { query: { beta: 'true' } }).withResponse();
    expect((await asBeta()).response.headers.get('x-proxy-cache')).toBe('MISS');
    expect(fake.requests.at(-1)!.path).toBe('/v1/messages?beta=true');
    const calls = fake.requests.length;
    const plain = await anthropic.messages.create(body).withResponse();
    expect(plain.response.headers.get('x-proxy-cache')).toBe('MISS');
    expect(fake.requests.length).toBe(calls + 1);
    expect(fake.requests.at(-1)!.path).toBe('/v1/messages');
    expect((await asBeta()).response.headers.get('x-proxy-cache')).toBe('HIT');
  });

  it.each([
    ['`?x=1`, then `?x=2`', { x: '1' }, { x: '2' }],
    ['no query, then `?api-version=2024-10-21`', undefined, { 'api-version': '2024-10-21' }],
  ] as const)('OpenAI: %s', async (_, first, second) => {
    const openai = new OpenAI({
      baseURL: `${proxy.proxyBase}/prov-b/v1`,
      apiKey: proxy.account.token,
      maxRetries: 0,
      defaultHeaders: cacheOn,
    });
    const fake = proxy.fakes.fakes['prov-b'];
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: unique() }] };
    const ask = (query: Record<string, string> | undefined) =>
      openai.chat.completions.create(body, { query }).withResponse();
    expect((await ask(first)).response.headers.get('x-proxy-cache')).toBe('MISS');
    expect((await ask(first)).response.headers.get('x-proxy-cache')).toBe('HIT');
    const calls = fake.requests.length;
    const other = await ask(second);
    expect(other.response.headers.get('x-proxy-cache')).toBe('MISS');
    expect(fake.requests.length).toBe(calls + 1);
    expect(fake.requests.at(-1)!.path).toBe(`/v1/chat/completions?${new URLSearchParams(second).toString()}`);
    expect((await ask(second)).response.headers.get('x-proxy-cache')).toBe('HIT');
  });

  it('Bedrock InvokeModel: `?x=1`, then no query', async () => {
    const client = bedrockClient(proxy.proxyBase, proxy.account.token, cacheOn);
    let query: Record<string, string> = {};
    client.middlewareStack.add(
      (next) => (args) => {
        (args.request as { query: Record<string, string> }).query = { ...query };
        return next(args);
      },
      { step: 'build', name: 'testQuery' },
    );
    const command = new InvokeModelCommand({
      modelId: BEDROCK_MODEL,
      body: JSON.stringify({
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 100,
        messages: [{ role: 'user', content: unique() }],
      }),
    });
    query = { x: '1' };
    await client.send(command);
    expect(proxy.fakes.bedrock.requests.at(-1)!.rawQuery).toBe('x=1');
    const calls = proxy.fakes.bedrock.requests.length;
    await client.send(command);
    expect(proxy.fakes.bedrock.requests.length).toBe(calls);
    query = {};
    await client.send(command);
    expect(proxy.fakes.bedrock.requests.length).toBe(calls + 1);
    expect(proxy.fakes.bedrock.requests.at(-1)!.rawQuery).toBe('');
  });
});
