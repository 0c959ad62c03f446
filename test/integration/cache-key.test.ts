import Anthropic from '@anthropic-ai/sdk';
import { randomBytes } from 'node:crypto';
import { IGNORED_FIELDS, type CacheKind } from '../../lambda/cache/cache-key';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * Requests that ask something different never share a cache entry: the key is the whole
 * body but a short list of fields that cannot change the answer (docs/caching.md).
 */
let proxy: ProxyServer;
beforeAll(async () => {
  // Every variation is a request of its own: the rate limit is not under test.
  proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(async () => {
  await proxy.stop();
});

const cacheOn = { headers: { 'x-proxy-cache': 'true' } };
const unique = () => `cache key ${randomBytes(6).toString('hex')}`;
const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 });

describe('the cache key through the official SDKs', () => {
  it('two messages requests that differ only in `system` get their own answers; the same system again hits', async () => {
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 });
    const fake = proxy.fakes.fakes['prov-a'];
    const messages = [{ role: 'user' as const, content: unique() }];
    const ask = (system: string) =>
      client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages }, cacheOn).withResponse();

    fake.next({ usage: usage(111) });
    const pirate = await ask('You are a pirate.');
    fake.next({ usage: usage(222) });
    const french = await ask('Answer only in French.');
    expect(pirate.response.headers.get('x-proxy-cache')).toBe('MISS');
    expect(french.response.headers.get('x-proxy-cache')).toBe('MISS');
    // Each got the answer the provider gave to its own question.
    expect(pirate.data.usage.input_tokens).toBe(111);
    expect(french.data.usage.input_tokens).toBe(222);

    const calls = fake.requests.length;
    const again = await ask('You are a pirate.');
    expect(again.response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(again.data.usage.input_tokens).toBe(111);
    const frenchAgain = await ask('Answer only in French.');
    expect(frenchAgain.response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(frenchAgain.data.usage.input_tokens).toBe(222);
    expect(fake.requests.length).toBe(calls);
  });
});

/**
 * One table per endpoint kind (docs/caching.md, "The key"): changing any answer-shaping field —
 * the ones named in the docs, the ones earlier versions ignored, and one no provider has yet —
 * is a miss; changing a field on the kind's ignore list is a hit.
 */
const SHAPING: Record<string, Record<string, unknown>> = {
  messages: {
    model: 'claude-haiku-4-5',
    messages: [{ role: 'user', content: 'something else' }],
    system: 'You are a pirate.',
    tools: [{ name: 'search', input_schema: { type: 'object' } }],
    tool_choice: { type: 'any' },
    thinking: { type: 'enabled', budget_tokens: 1024 },
    output_config: { effort: 'low' },
    output_format: { type: 'json_schema', schema: { type: 'object' } },
    stop_sequences: ['END'],
    a_field_added_tomorrow: true,
  },
  chat: {
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'something else' }],
    tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
    tool_choice: 'required',
    response_format: { type: 'json_object' },
    n: 2,
    logprobs: true,
    top_logprobs: 3,
    reasoning_effort: 'high',
    modalities: ['text', 'audio'],
    audio: { voice: 'alloy', format: 'wav' },
    seed: 9,
    stop: ['END'],
    presence_penalty: 1,
    a_field_added_tomorrow: true,
  },
  responses: {
    model: 'gpt-4.1',
    input: 'something else',
    instructions: 'You are a pirate.',
    tools: [{ type: 'web_search' }],
    tool_choice: 'required',
    text: { format: { type: 'json_object' } },
    reasoning: { effort: 'high' },
    include: ['reasoning.encrypted_content'],
    prompt: { id: 'pmpt_abc' },
    truncation: 'auto',
    a_field_added_tomorrow: true,
  },
  embeddings: {
    model: 'text-embedding-3-large',
    input: 'something else',
    dimensions: 256,
    encoding_format: 'base64',
    a_field_added_tomorrow: true,
  },
};

/** A value for each ignored field (a different one from the base request's). */
const IGNORED_VALUES: Record<string, unknown> = {
  stream: true,
  stream_options: { include_usage: true },
  max_tokens: 999,
  max_completion_tokens: 999,
  max_output_tokens: 999,
  temperature: 1.3,
  top_p: 0.4,
  top_k: 7,
  user: 'alice',
  safety_identifier: 'user-123',
  metadata: { purpose: 'test' },
  store: false,
  service_tier: 'flex',
  prompt_cache_key: 'pck-1',
  prompt_cache_retention: '24h',
};

const KINDS: Record<string, { path: string; provider: 'prov-a' | 'prov-b'; base: () => Record<string, unknown> }> = {
  messages: {
    path: '/v1/messages',
    provider: 'prov-a',
    base: () => ({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: unique() }] }),
  },
  chat: {
    path: '/prov-b/v1/chat/completions',
    provider: 'prov-b',
    base: () => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: unique() }] }),
  },
  responses: {
    path: '/prov-b/v1/responses',
    provider: 'prov-b',
    base: () => ({ model: 'gpt-4.1-2025-04-14', input: unique() }),
  },
  embeddings: {
    path: '/prov-b/v1/embeddings',
    provider: 'prov-b',
    base: () => ({ model: 'text-embedding-3-small', input: unique() }),
  },
};

async function cacheStatus(
  kind: string,
  body: Record<string, unknown>,
  credential?: { key: string },
): Promise<string | null> {
  const { path, provider } = KINDS[kind]!;
  const secret = credential?.key ?? proxy.account.token;
  const auth: Record<string, string> =
    provider === 'prov-a'
      ? { 'x-api-key': secret, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${secret}` };
  if (credential) auth['x-proxy-token'] = proxy.account.token;
  const response = await fetch(proxy.proxyBase + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-proxy-cache': 'true', ...auth },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  return response.headers.get('x-proxy-cache');
}

describe.each(Object.keys(KINDS))('the %s cache key', (kind) => {
  const base = KINDS[kind]!.base();
  beforeAll(async () => {
    expect(await cacheStatus(kind, base)).toBe('MISS');
    expect(await cacheStatus(kind, base)).toBe('HIT');
  });

  it.each(Object.keys(SHAPING[kind]!))('a different `%s` is a miss', async (field) => {
    expect(await cacheStatus(kind, { ...base, [field]: SHAPING[kind]![field] })).toBe('MISS');
  });

  it.each(Object.keys(IGNORED_FIELDS[kind as CacheKind]))('a different `%s` is a hit', async (field) => {
    expect(await cacheStatus(kind, { ...base, [field]: IGNORED_VALUES[field] })).toBe('HIT');
  });
});

describe('pass-through mode', () => {
  it('a hit needs the same provider key; a stored-mode entry is not served to it', async () => {
    const body = KINDS.chat!.base();
    for (const key of ['caller-key-one-0123456789', 'caller-key-two-0123456789']) proxy.secrets.add(key);
    expect(await cacheStatus('chat', body)).toBe('MISS');
    expect(await cacheStatus('chat', body, { key: 'caller-key-one-0123456789' })).toBe('MISS');
    expect(await cacheStatus('chat', body, { key: 'caller-key-one-0123456789' })).toBe('HIT');
    expect(await cacheStatus('chat', body, { key: 'caller-key-two-0123456789' })).toBe('MISS');
    expect(await cacheStatus('chat', body)).toBe('HIT');
  });
});

describe('answers that depend on state the provider keeps', () => {
  it.each([
    ['previous_response_id', 'resp_abc123'],
    ['conversation', 'conv_abc123'],
    ['conversation', { id: 'conv_abc123' }],
  ])(
    'a Responses request with `%s` is never read from or stored in the cache, and says BYPASS',
    async (field, value) => {
      const body = { ...KINDS.responses!.base(), [field]: value };
      const fake = proxy.fakes.fakes['prov-b'];
      const calls = fake.requests.length;
      expect(await cacheStatus('responses', body)).toBe('BYPASS');
      expect(await cacheStatus('responses', body)).toBe('BYPASS');
      expect(fake.requests.length).toBe(calls + 2);
    },
  );
});
