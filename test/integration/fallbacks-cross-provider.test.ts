/**
 * A fallback on another provider (docs/fallbacks.md, "The header"): an OpenAI-compatible request
 * that fails on its own provider is answered by `<provider>/<model>` with that provider's stored
 * keys, its pool rotating like the request's own; the row names the provider, model and key that
 * answered, costed at that model's price. A pass-through request may not fall back on another
 * provider: refused before anything is sent.
 */
import OpenAI from 'openai';
import type { RecordedRequest } from '../fakes/behaviour';
import { fakeProviderKey, startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, expectedCostUsd, TEST_MODELS } from '../support/sdk-clients';

const OTHER = 'prov-d';
const FALLBACK = `${OTHER}/${TEST_MODELS[OTHER]}`;

let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => proxy.fakes.reset());

const bearerOf = (request: RecordedRequest) => (request.headers.authorization ?? '').replace('Bearer ', '');

/** An account with a key for prov-b and a pool of two for the other provider (`default`, then `backup`). */
async function accountWithOtherPool(): Promise<{ account: Account; own: string; first: string; second: string }> {
  const account = await proxy.createAccount('cross-provider');
  const own = await proxy.saveKey(account.token, 'prov-b');
  const first = await proxy.saveKey(account.token, OTHER);
  const second = fakeProviderKey(OTHER);
  proxy.secrets.add(second);
  const saved = await proxy.api(`/api/keys/${OTHER}/backup`, {
    method: 'PUT',
    token: account.token,
    body: { key: second },
  });
  expect(saved.status).toBe(200);
  return { account, own, first, second };
}

it.each([false, true])(
  '503 on every attempt: the other provider answers with its own pool, a 429 on its first key served by the next (stream: %s)',
  async (stream) => {
    const { account, own, first, second } = await accountWithOtherPool();
    const primary = proxy.fakes.fakes['prov-b'];
    const other = proxy.fakes.fakes[OTHER];
    for (let i = 0; i < 3; i++) primary.next({ status: 503 });
    other.next({ status: 429, headers: { 'retry-after': '30' } });

    const result = await callThroughSdk({
      proxyBase: proxy.proxyBase,
      provider: 'prov-b',
      token: account.token,
      stream,
      headers: { 'x-proxy-fallback': FALLBACK },
    });
    expect(result.model).toBe(TEST_MODELS[OTHER]);
    // Each provider is sent its own keys only, and the other provider the body with its model.
    expect(primary.requests.map(bearerOf)).toEqual([own, own, own]);
    expect(other.requests.map(bearerOf)).toEqual([first, second]);
    for (const request of other.requests) {
      expect((request.json as { model: string }).model).toBe(TEST_MODELS[OTHER]);
      expect(request.headers['x-proxy-fallback']).toBeUndefined();
    }

    const [row] = await proxy.rowsFor(account.token, [result.requestId]);
    const sent = other.requests[1].response.usage!;
    expect(row).toMatchObject({
      status_code: 200,
      provider: OTHER,
      model: TEST_MODELS[OTHER],
      input_tokens: sent.inputTokens,
      output_tokens: sent.outputTokens,
      key_label: 'backup',
      key_hint: `…${second.slice(-4)}`,
    });
    expect(row.cost_usd).toBeCloseTo(expectedCostUsd(OTHER, sent), 9);
    const attempts = row.attempts as Array<{ target: string; status: number }>;
    expect(attempts.map(({ target, status }) => ({ target, status }))).toEqual([
      { target: `prov-b/${TEST_MODELS['prov-b']}`, status: 503 },
      { target: `prov-b/${TEST_MODELS['prov-b']}`, status: 503 },
      { target: `prov-b/${TEST_MODELS['prov-b']}`, status: 503 },
      { target: FALLBACK, status: 429 },
      { target: FALLBACK, status: 200 },
    ]);
    // No key of either provider in the row.
    for (const key of [own, first, second]) expect(JSON.stringify(row)).not.toContain(key);
  },
);

it("a pass-through request naming another provider's model is refused before anything is sent (400, OpenAI's shape)", async () => {
  const client = new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: fakeProviderKey('prov-b'),
    defaultHeaders: { 'x-proxy-token': proxy.account.token, 'x-proxy-fallback': FALLBACK },
    maxRetries: 0,
  });
  const refused = await client.chat.completions
    .create({ model: TEST_MODELS['prov-b'], messages: [{ role: 'user', content: 'Hi' }] })
    .catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
  expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
    param: 'x-proxy-fallback',
    message: expect.stringContaining(OTHER),
  });
  expect(proxy.fakes.fakes['prov-b'].requests).toHaveLength(0);
  expect(proxy.fakes.fakes[OTHER].requests).toHaveLength(0);
});
