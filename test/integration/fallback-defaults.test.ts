/**
 * Default fallbacks and limits set through the management API (docs/fallbacks.md, "Defaults"), seen
 * through the official SDKs: a request with no header is served by the account's default after a
 * 503, the token's default wins over the account's, the header over both, `none` turns them off, and
 * the account's first-token limit moves a silent stream on sooner than the default. Each account's
 * settings are its own.
 */
import OpenAI from 'openai';
import { DEFAULT_FIRST_TOKEN_MS } from '../../lambda/upstream/fallbacks';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, expectedCostUsd, TEST_MODELS } from '../support/sdk-clients';

/** Models the fakes answer for, priced like the test models (their catalogue family). */
const ACCOUNT_FALLBACK: Record<'prov-a' | 'prov-b', string> = {
  'prov-a': 'claude-sonnet-4-5',
  'prov-b': 'gpt-4o-mini',
};
const TOKEN_FALLBACK = 'gpt-4o-mini-2024-07-18-token';
const HEADER_FALLBACK = 'gpt-4o-mini-2024-07-18-header';

let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => proxy.fakes.reset());

/** An account of its own, with stored keys for the providers the test calls. */
async function freshAccount(): Promise<Account> {
  const account = await proxy.createAccount();
  await Promise.all((['prov-a', 'prov-b'] as const).map((provider) => proxy.saveKey(account.token, provider)));
  return account;
}

async function setAccountDefaults(token: string, provider: ProviderId, model: string, fallbacks: string[]) {
  const response = await proxy.api(`/api/fallbacks/${provider}/${encodeURIComponent(model)}`, {
    method: 'PUT',
    token,
    body: { fallbacks },
  });
  expect([response.status, await response.json()]).toEqual([200, { provider, model, fallbacks }]);
}

/** A proxy-only app token of the account, with its own defaults for the prov-b test model. */
async function appTokenWithDefaults(account: Account, fallbacks: string[]): Promise<string> {
  const issued = (await (await proxy.api('/api/tokens', { token: account.token, body: {} })).json()) as {
    token: string;
    token_id: string;
  };
  const body = { fallbacks: [{ provider: 'prov-b', model: TEST_MODELS['prov-b'], fallbacks }] };
  const response = await proxy.api(`/api/tokens/${issued.token_id}/fallbacks`, {
    method: 'PUT',
    token: account.token,
    body,
  });
  expect([response.status, await response.json()]).toEqual([200, { token_id: issued.token_id, ...body }]);
  return issued.token;
}

const models = (provider: ProviderId) =>
  proxy.fakes.fakes[provider].requests.map((request) => (request.json as { model: string }).model);

describe.each(['prov-a', 'prov-b'] as const)('%s', (provider) => {
  it.each([false, true])(
    "no header: the account's default fallback answers after a 503 (stream: %s)",
    async (stream) => {
      const account = await freshAccount();
      await setAccountDefaults(account.token, provider, TEST_MODELS[provider], [ACCOUNT_FALLBACK[provider]]);
      const fake = proxy.fakes.fakes[provider];
      for (let i = 0; i < 3; i++) fake.next({ status: 503 });
      const result = await callThroughSdk({ proxyBase: proxy.proxyBase, provider, token: account.token, stream });

      expect(result.model).toBe(ACCOUNT_FALLBACK[provider]);
      expect(models(provider)).toEqual([...Array(3).fill(TEST_MODELS[provider]), ACCOUNT_FALLBACK[provider]]);
      const [row] = await proxy.rowsFor(account.token, [result.requestId]);
      const sent = fake.requests[3].response.usage!;
      expect(row).toMatchObject({
        status_code: 200,
        provider,
        model: ACCOUNT_FALLBACK[provider],
        input_tokens: sent.inputTokens,
        output_tokens: sent.outputTokens,
      });
      expect(row.cost_usd).toBeCloseTo(expectedCostUsd(provider, sent), 9);
      expect((row.attempts as Array<{ target: string; status: number }>).map((a) => [a.target, a.status])).toEqual([
        ...Array(3).fill([`${provider}/${TEST_MODELS[provider]}`, 503]),
        [`${provider}/${ACCOUNT_FALLBACK[provider]}`, 200],
      ]);
    },
  );
});

describe('precedence', () => {
  let account: Account;
  let appToken: string;
  beforeAll(async () => {
    account = await freshAccount();
    await setAccountDefaults(account.token, 'prov-b', TEST_MODELS['prov-b'], [ACCOUNT_FALLBACK['prov-b']]);
    appToken = await appTokenWithDefaults(account, [TOKEN_FALLBACK]);
  });

  const callAfter503s = (token: string, headers?: Record<string, string>) => {
    for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-b'].next({ status: 503 });
    return callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token, stream: false, headers });
  };

  it("the token's default wins over the account's", async () => {
    expect((await callAfter503s(appToken)).model).toBe(TOKEN_FALLBACK);
    // The account's other tokens still get the account's.
    expect((await callAfter503s(account.token)).model).toBe(ACCOUNT_FALLBACK['prov-b']);
  });

  it('the header wins over both', async () => {
    expect((await callAfter503s(appToken, { 'x-proxy-fallback': HEADER_FALLBACK })).model).toBe(HEADER_FALLBACK);
    expect(models('prov-b').at(-1)).toBe(HEADER_FALLBACK);
  });

  it('`x-proxy-fallback: none` turns the defaults off: the 503 goes back as sent', async () => {
    await expect(callAfter503s(appToken, { 'x-proxy-fallback': 'none' })).rejects.toMatchObject({ status: 503 });
    expect(models('prov-b')).toEqual(Array(3).fill(TEST_MODELS['prov-b']));
    for (const request of proxy.fakes.fakes['prov-b'].requests)
      expect(request.headers['x-proxy-fallback']).toBeUndefined();
  });

  it("a default off the token's model list is refused before anything is sent, like the header's", async () => {
    const issued = (await (await proxy.api('/api/tokens', { token: account.token, body: {} })).json()) as {
      token: string;
      token_id: string;
    };
    const limited = await proxy.api(`/api/tokens/${issued.token_id}/limits`, {
      method: 'PUT',
      token: account.token,
      body: { models: [TEST_MODELS['prov-b']] },
    });
    expect(limited.status).toBe(200);
    await expect(
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: issued.token, stream: false }),
    ).rejects.toMatchObject({ status: 403, message: expect.stringContaining('Fallback:') });
    expect(proxy.fakes.fakes['prov-b'].requests).toHaveLength(0);
  });
});

test("the account's first-token limit moves a silent stream on sooner than the default", async () => {
  const account = await freshAccount();
  await setAccountDefaults(account.token, 'prov-b', TEST_MODELS['prov-b'], [ACCOUNT_FALLBACK['prov-b']]);
  const limits = await proxy.api('/api/fallback-limits', {
    method: 'PUT',
    token: account.token,
    body: { first_token_timeout: 1, stall_timeout: 2 },
  });
  expect([limits.status, await limits.json()]).toEqual([200, { first_token_timeout: 1, stall_timeout: 2 }]);
  proxy.fakes.fakes['prov-b'].next({ hang: true });
  const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: account.token, maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model: TEST_MODELS['prov-b'], messages: [{ role: 'user', content: 'Say hello.' }], stream: true })
    .withResponse();
  let text = '';
  for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
  expect(text.length).toBeGreaterThan(0);
  expect(models('prov-b')).toEqual([TEST_MODELS['prov-b'], ACCOUNT_FALLBACK['prov-b']]);
  const [row] = await proxy.rowsFor(account.token, [response.headers.get('x-proxy-request-id')!]);
  const [silent, answered] = row.attempts as Array<{ target: string; status: unknown; duration_ms: number }>;
  // No response headers within the limit: given up on, never sent the request again.
  expect(silent).toMatchObject({ target: `prov-b/${TEST_MODELS['prov-b']}`, status: 'timeout' });
  // Given up on at the account's 1 s, where the default would have waited 10 s.
  expect(silent.duration_ms).toBeLessThan(DEFAULT_FIRST_TOKEN_MS);
  expect(answered).toMatchObject({ target: `prov-b/${ACCOUNT_FALLBACK['prov-b']}`, status: 200 });
});

describe('the management API', () => {
  let account: Account;
  beforeAll(async () => {
    account = await freshAccount();
  });

  const put = (path: string, body: unknown, token = account.token) => proxy.api(path, { method: 'PUT', token, body });

  it.each([
    ['/api/fallbacks/prov-z/gpt-4o', { fallbacks: ['gpt-4o-mini'] }, 'fallbacks', /unknown provider/],
    ['/api/fallbacks/prov-b/gpt-4o', { fallbacks: ['prov-a/claude-sonnet-4-5'] }, 'fallbacks', /same API shape/],
    ['/api/fallbacks/prov-b/gpt-4o', { fallbacks: ['a', 'b', 'c', 'd'] }, 'fallbacks', /1 to 3/],
    ['/api/fallbacks/prov-b/gpt-4o', { fallbacks: [] }, 'fallbacks', /1 to 3/],
    ['/api/fallbacks/prov-b/gpt-4o', { fallbacks: ['a'], fallback: ['a'] }, 'fallback', /Unknown field/],
    [
      `/api/fallbacks/prov-b/${encodeURIComponent('gpt-4o\u202e')}`,
      { fallbacks: ['gpt-4o-mini'] },
      'model',
      /bidirectional/,
    ],
    ['/api/fallback-limits', { first_token_timeout: 0 }, 'first_token_timeout', /1 to 300/],
    ['/api/fallback-limits', { stall_timeout: '5' }, 'stall_timeout', /1 to 300/],
    [
      '/api/tokens/TOKEN/fallbacks',
      { fallbacks: [{ provider: 'prov-a', model: 'claude-sonnet-4-6', fallbacks: ['prov-b/gpt-4o'] }] },
      'fallbacks',
      /same API shape/,
    ],
  ])('PUT %s %j: 400 naming the field', async (path, body, field, message) => {
    const response = await put(path.replace('TOKEN', account.tokenId), body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: expect.any(String), message: expect.stringMatching(message), field },
    });
  });

  it('set, read, delete; each change in the audit log; a viewer reads but may not change', async () => {
    await setAccountDefaults(account.token, 'prov-e', 'meta-llama/llama-4-scout', ['prov-b/gpt-4o-mini']);
    await setAccountDefaults(account.token, 'prov-b', 'gpt-4o', ['gpt-4o-mini', 'prov-d/mistral-small-latest']);
    expect((await put('/api/fallback-limits', { first_token_timeout: 2.5 })).status).toBe(200);
    const viewer = (await (
      await proxy.api('/api/tokens', { token: account.token, body: { role: 'viewer' } })
    ).json()) as { token: string };
    const read = await proxy.api('/api/fallbacks', { token: viewer.token });
    expect(await read.json()).toEqual({
      fallbacks: [
        { provider: 'prov-b', model: 'gpt-4o', fallbacks: ['gpt-4o-mini', 'prov-d/mistral-small-latest'] },
        { provider: 'prov-e', model: 'meta-llama/llama-4-scout', fallbacks: ['prov-b/gpt-4o-mini'] },
      ],
      first_token_timeout: 2.5,
      stall_timeout: null,
    });
    for (const [method, path, body] of [
      ['PUT', '/api/fallbacks/prov-b/gpt-4o', { fallbacks: ['gpt-4.1'] }],
      ['DELETE', '/api/fallbacks/prov-b/gpt-4o', undefined],
      ['PUT', '/api/fallback-limits', { stall_timeout: 5 }],
    ] as const)
      expect((await proxy.api(path, { method, token: viewer.token, body })).status).toBe(403);

    const removed = await proxy.api(`/api/fallbacks/prov-e/${encodeURIComponent('meta-llama/llama-4-scout')}`, {
      method: 'DELETE',
      token: account.token,
    });
    expect(removed.status).toBe(204);
    expect((await proxy.api('/api/fallbacks/prov-e/gone', { method: 'DELETE', token: account.token })).status).toBe(
      404,
    );
    const after = (await (await proxy.api('/api/fallbacks', { token: account.token })).json()) as {
      fallbacks: Array<{ model: string }>;
    };
    expect(after.fallbacks.map((entry) => entry.model)).toEqual(['gpt-4o']);

    const audit = (await (await proxy.api('/api/audit?limit=50', { token: account.token })).json()) as {
      items: Array<{ action: string; target: string; before?: unknown; after?: unknown }>;
    };
    const entries = audit.items.filter((item) => item.action.startsWith('fallbacks.')).reverse();
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'fallbacks.set',
        target: 'prov-e/meta-llama/llama-4-scout',
        before: null,
        after: ['prov-b/gpt-4o-mini'],
      }),
      expect.objectContaining({ action: 'fallbacks.set', target: 'prov-b/gpt-4o' }),
      expect.objectContaining({
        action: 'fallbacks.limits',
        before: { first_token_timeout: null, stall_timeout: null },
        after: { first_token_timeout: 2.5, stall_timeout: null },
      }),
      expect.objectContaining({
        action: 'fallbacks.removed',
        target: 'prov-e/meta-llama/llama-4-scout',
        before: ['prov-b/gpt-4o-mini'],
      }),
    ]);
  });

  it("a token's defaults show in the token list and its audit entry", async () => {
    await appTokenWithDefaults(account, ['gpt-4o']);
    const { tokens } = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
      tokens: Array<{ fallbacks: unknown[] }>;
    };
    expect(tokens.map((token) => token.fallbacks)).toContainEqual([
      { provider: 'prov-b', model: TEST_MODELS['prov-b'], fallbacks: ['gpt-4o'] },
    ]);
    const audit = (await (await proxy.api('/api/audit?action=token.fallbacks', { token: account.token })).json()) as {
      items: Array<{ after: unknown }>;
    };
    expect(audit.items[0].after).toEqual([{ provider: 'prov-b', model: TEST_MODELS['prov-b'], fallbacks: ['gpt-4o'] }]);
  });

  it("one account never sees or uses another's defaults", async () => {
    await setAccountDefaults(account.token, 'prov-b', TEST_MODELS['prov-b'], [ACCOUNT_FALLBACK['prov-b']]);
    const other = await freshAccount();
    expect(await (await proxy.api('/api/fallbacks', { token: other.token })).json()).toEqual({
      fallbacks: [],
      first_token_timeout: null,
      stall_timeout: null,
    });
    // Nor change them: the path names no account, so the other account only ever reaches its own.
    expect(
      (await proxy.api(`/api/fallbacks/prov-b/${TEST_MODELS['prov-b']}`, { method: 'DELETE', token: other.token }))
        .status,
    ).toBe(404);
    for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-b'].next({ status: 503 });
    await expect(
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: other.token, stream: false }),
    ).rejects.toMatchObject({ status: 503 });
    expect(models('prov-b')).toEqual(Array(3).fill(TEST_MODELS['prov-b']));
    // And a token of one account can't be given defaults through another.
    expect((await put(`/api/tokens/${account.tokenId}/fallbacks`, { fallbacks: [] }, other.token)).status).toBe(404);
  });
});
