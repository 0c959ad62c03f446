import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import type { ProviderId } from '../fakes/start-fakes';
import { eventually } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, expectedCostUsd, TEST_MODELS } from '../support/sdk-clients';

const PROVIDERS: ProviderId[] = ['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e'];
const CREDENTIAL_HEADER: Record<ProviderId, string> = {
  'prov-a': 'x-api-key',
  'prov-b': 'authorization',
  'prov-c': 'authorization',
  'prov-d': 'authorization',
  'prov-e': 'authorization',
};
const presented = (provider: ProviderId, key: string) => (provider === 'prov-a' ? key : `Bearer ${key}`);

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

/** What the client would have read had it called the fake provider directly with the same request. */
async function directAnswer(provider: ProviderId, stream: boolean): Promise<string> {
  const fake = proxy.fakes.fakes[provider];
  const body = {
    model: TEST_MODELS[provider],
    max_tokens: 64,
    messages: [{ role: 'user', content: 'Say hello.' }],
    stream,
  };
  const response = await fetch(fake.origin + fake.endpointPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [CREDENTIAL_HEADER[provider]]: presented(provider, 'direct-key') },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!stream) {
    const json = JSON.parse(text);
    return provider === 'prov-a'
      ? json.content.map((b: { text?: string }) => b.text ?? '').join('')
      : json.choices[0].message.content;
  }
  let out = '';
  for (const block of text.split('\n\n')) {
    const data = block
      .split('\n')
      .find((l) => l.startsWith('data: '))
      ?.slice(6);
    if (!data || data === '[DONE]') continue;
    const event = JSON.parse(data);
    out +=
      provider === 'prov-a'
        ? event.delta?.type === 'text_delta'
          ? event.delta.text
          : ''
        : (event.choices?.[0]?.delta?.content ?? '');
  }
  return out;
}

describe.each(PROVIDERS)('%s through its official SDK', (provider) => {
  describe.each([
    ['stored', false],
    ['stored', true],
    ['pass-through', false],
    ['pass-through', true],
  ] as const)('%s mode, stream=%s', (mode, stream) => {
    it('returns the provider answer unchanged and records an exact usage row', async () => {
      const fake = proxy.fakes.fakes[provider];
      const before = fake.requests.length;
      const clientKey = `client-own-${provider}-key-0123456789`;
      proxy.secrets.add(clientKey);
      const result = await callThroughSdk({
        proxyBase: proxy.proxyBase,
        provider,
        token: proxy.account.token,
        providerKey: mode === 'pass-through' ? clientKey : undefined,
        stream,
        headers: { 'x-proxy-user': `alice-${mode}`, 'x-custom-beta': 'beta-1' },
      });

      expect(result.text).toBe(await directAnswer(provider, stream));
      expect(result.text.length).toBeGreaterThan(0);
      expect(result.model).toBe(TEST_MODELS[provider]);
      expect(result.requestId).toMatch(/^[0-9a-z]+-[0-9a-f]{16}$/);
      expect(result.headers.get('x-proxy-ratelimit-limit')).toBe('100');

      // What reached the provider: its own key in its own header, nothing of the proxy's.
      const upstream = fake.requests[before];
      const expectedKey = mode === 'stored' ? proxy.storedKeys[provider] : clientKey;
      expect(upstream.headers[CREDENTIAL_HEADER[provider]]).toBe(presented(provider, expectedKey));
      expect(Object.keys(upstream.headers).filter((h) => h.startsWith('x-proxy-'))).toEqual([]);
      expect(JSON.stringify(upstream.headers)).not.toContain(proxy.account.token);
      // Provider headers are forwarded as the client sent them.
      expect(upstream.headers['x-custom-beta']).toBe('beta-1');
      if (provider === 'prov-a') expect(upstream.headers['anthropic-version']).toMatch(/^\d{4}-\d\d-\d\d$/);

      const sent = upstream.response.usage!;
      // Rows are written after the response ends: wait for this request's own row, not any row of the requester.
      const [row] = await proxy.rowsFor(proxy.account.token, [result.requestId]);
      expect(row).toMatchObject({
        provider,
        model: TEST_MODELS[provider],
        input_tokens: sent.inputTokens,
        output_tokens: sent.outputTokens,
        cache_read_tokens: sent.cacheReadTokens,
        cache_write_tokens: sent.cacheWriteTokens,
        requester: `alice-${mode}`,
        status_code: 200,
        stream,
        cached: false,
        mode,
        priced: true,
      });
      expect(sent.inputTokens + sent.outputTokens).toBeGreaterThan(0);
      expect(row.cost_usd).toBeCloseTo(expectedCostUsd(provider, sent), 9);
      expect(row.latency_ms).toEqual(expect.any(Number));
      expect(row).not.toHaveProperty('account_id');
    });
  });
});

describe('stream usage the client did not ask for', () => {
  it.each(['prov-b', 'prov-c'] as const)(
    '%s: the proxy asks upstream for usage and hides the extra chunk',
    async (provider) => {
      const fake = proxy.fakes.fakes[provider];
      const before = fake.requests.length;
      const response = await fetch(`${proxy.proxyBase}/${provider}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: TEST_MODELS[provider],
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
        }),
      });
      const text = await response.text();
      expect((fake.requests[before].json as { stream_options?: unknown }).stream_options).toEqual({
        include_usage: true,
      });
      expect(text).not.toMatch(/"choices":\[\],/);
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      // Earlier tests left rows of this provider too: wait for this request's own row.
      const id = response.headers.get('x-proxy-request-id');
      const row = (await eventually(async () =>
        (await proxy.waitForRows(proxy.account.token, 1, `provider=${provider}`)).find((r) => r.id === id),
      ))!;
      expect(row).toBeDefined();
      expect(row.output_tokens).toBe(fake.requests[before].response.usage!.outputTokens);
      expect(row.output_tokens).toBeGreaterThan(0);
    },
  );

  it.each(['prov-b', 'prov-c'] as const)(
    '%s through the openai SDK: no chunk carries a `usage` field, and the bytes are what the provider sends unasked, forwarded and from the cache',
    async (provider) => {
      const fake = proxy.fakes.fakes[provider];
      const body = {
        model: TEST_MODELS[provider],
        messages: [{ role: 'user' as const, content: `unasked ${randomBytes(4).toString('hex')}` }],
        stream: true as const,
      };
      // What the provider itself sends to a client that did not ask, straight from the fake.
      const direct = await fetch(`${fake.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${proxy.storedKeys[provider]}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const unasked = await direct.text();
      expect(unasked).not.toContain('"usage"');

      const client = new OpenAI({
        baseURL: `${proxy.proxyBase}/${provider}/v1`,
        apiKey: proxy.account.token,
        maxRetries: 0,
      });
      const before = fake.requests.length;
      const { data, response } = await client.chat.completions
        .create(body, { headers: { 'x-proxy-cache': 'true' } })
        .withResponse();
      const chunks: object[] = [];
      for await (const chunk of data) chunks.push(chunk);
      expect(response.headers.get('x-proxy-cache')).toBe('MISS');
      expect(chunks.filter((chunk) => Object.hasOwn(chunk, 'usage'))).toEqual([]);
      expect(chunks).toHaveLength(unasked.split('\n\n').filter((block) => block.startsWith('data: {')).length);
      // The provider was asked, and the row has the usage it reported.
      expect(fake.requests[before]!.json).toMatchObject({ stream_options: { include_usage: true } });
      const [row] = await proxy.rowsFor(proxy.account.token, [response.headers.get('x-proxy-request-id')!]);
      expect(row!.input_tokens).toBe(fake.requests[before]!.response.usage!.inputTokens);
      expect(row!.output_tokens).toBe(fake.requests[before]!.response.usage!.outputTokens);
      expect(row!.output_tokens).toBeGreaterThan(0);

      for (const expected of ['MISS', 'HIT']) {
        const raw = await fetch(`${proxy.proxyBase}/${provider}/v1/chat/completions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${proxy.account.token}`,
            'content-type': 'application/json',
            // A new question for the first round (MISS, forwarded); the same again is the HIT.
            'x-proxy-cache': 'true',
          },
          body: JSON.stringify({ ...body, messages: [{ role: 'user', content: `${body.messages[0].content} raw` }] }),
        });
        expect(raw.headers.get('x-proxy-cache')).toBe(expected);
        expect(await raw.text()).toBe(unasked);
      }
    },
  );

  it('keeps the usage chunk for a client that asked for it', async () => {
    const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(await response.text()).toMatch(/"choices":\[\],/);
  });
});
