/**
 * Key pools (docs/fallbacks.md, "Key pools") through the official SDKs, stream and JSON, against
 * the fake providers on DynamoDB Local: a key answering 429 rests and the next key of the pool
 * serves the same request at once (the provider sees both keys, in order; the row names the key
 * that served and both attempts, cost exact); a key answering 401 is marked failing, the next
 * request goes straight to the next key and `GET /api/keys` shows it failing; a pool with every
 * key resting answers the provider's last 429 as sent. The labelled routes, their audit entries
 * and roles; no key in any row.
 */
import type { Account } from '../support/proxy-server';
import { startProxy, fakeProviderKey, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, expectedCostUsd, TEST_MODELS } from '../support/sdk-clients';
import { eventually } from '../support/patience';
import { csvRows } from '../support/csv';
import type { RecordedRequest } from '../fakes/behaviour';

type Pooled = 'prov-a' | 'prov-b';

let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => proxy.fakes.reset());

/** The provider key a request carried, in its provider's credential header. */
const keyOf = (request: RecordedRequest) =>
  (request.headers['x-api-key'] ?? request.headers.authorization ?? '').replace('Bearer ', '');

async function saveLabelled(account: Account, provider: Pooled, label: string): Promise<string> {
  const key = fakeProviderKey(provider);
  proxy.secrets.add(key);
  const response = await proxy.api(`/api/keys/${provider}/${label}`, {
    method: 'PUT',
    token: account.token,
    body: { key },
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ provider, label, hint: `…${key.slice(-4)}` });
  return key;
}

/** A new account whose pool for `provider` holds `default` and `backup`. */
async function pooledAccount(provider: Pooled): Promise<{ account: Account; first: string; second: string }> {
  const account = await proxy.createAccount(`pool-${provider}`);
  const first = await proxy.saveKey(account.token, provider);
  const second = await saveLabelled(account, provider, 'backup');
  return { account, first, second };
}

interface ListedKey {
  provider: string;
  label: string;
  hint: string;
  updated_at: string;
  state: string;
  cooling_until?: string;
}

async function listed(account: Account): Promise<ListedKey[]> {
  const response = await proxy.api('/api/keys', { token: account.token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { keys: ListedKey[] }).keys;
}

describe.each<Pooled>(['prov-a', 'prov-b'])('%s', (provider) => {
  it.each([false, true])('a 429 on the first key is served by the second at once (stream: %s)', async (stream) => {
    const { account, first, second } = await pooledAccount(provider);
    const fake = proxy.fakes.fakes[provider];
    fake.next({ status: 429, headers: { 'retry-after': '30' } });
    const result = await callThroughSdk({ proxyBase: proxy.proxyBase, provider, token: account.token, stream });
    expect(result.model).toBe(TEST_MODELS[provider]);
    expect(fake.requests.map(keyOf)).toEqual([first, second]);

    const [row] = await proxy.rowsFor(account.token, [result.requestId]);
    const sent = fake.requests[1].response.usage!;
    expect(row).toMatchObject({
      status_code: 200,
      key_label: 'backup',
      key_hint: `…${second.slice(-4)}`,
      input_tokens: sent.inputTokens,
      output_tokens: sent.outputTokens,
    });
    // The 429 cost nothing: the row costs the answer alone.
    expect(row.cost_usd).toBeCloseTo(expectedCostUsd(provider, sent), 9);
    const target = `${provider}/${TEST_MODELS[provider]}`;
    expect((row.attempts as Array<Record<string, unknown>>).map(({ duration_ms: _, ...attempt }) => attempt)).toEqual([
      { target, status: 429, key: 'default' },
      { target, status: 200, key: 'backup' },
    ]);
    expect(JSON.stringify(row)).not.toContain(first);
    expect(JSON.stringify(row)).not.toContain(second);

    // The resting key is skipped by the next request; the pool shows it cooling for the time asked.
    const next = await callThroughSdk({ proxyBase: proxy.proxyBase, provider, token: account.token, stream });
    expect(fake.requests.map(keyOf)).toEqual([first, second, second]);
    const [nextRow] = await proxy.rowsFor(account.token, [next.requestId]);
    expect(nextRow).toMatchObject({ key_label: 'backup' });
    expect(nextRow.attempts).toBeUndefined();
    const keys = await eventually(async () => {
      const now = await listed(account);
      return now.find((k) => k.label === 'default')?.state === 'cooling' ? now : undefined;
    });
    expect(keys).toBeDefined();
    const cooling = keys!.find((k) => k.label === 'default')!;
    expect(Date.parse(cooling.cooling_until!) - Date.parse(String(row.ts))).toBeGreaterThanOrEqual(29_000);
    expect(keys!.find((k) => k.label === 'backup')?.state).toBe('ok');
  });
});

it.each([false, true])(
  'a 401 marks the key failing: the next key serves, the next request goes straight to it (stream: %s)',
  async (stream) => {
    const { account, first, second } = await pooledAccount('prov-b');
    const fake = proxy.fakes.fakes['prov-b'];
    fake.next({ status: 401, errorMessage: 'Incorrect API key provided' });
    const result = await callThroughSdk({
      proxyBase: proxy.proxyBase,
      provider: 'prov-b',
      token: account.token,
      stream,
    });
    expect(fake.requests.map(keyOf)).toEqual([first, second]);
    const [row] = await proxy.rowsFor(account.token, [result.requestId]);
    expect(row).toMatchObject({ status_code: 200, key_label: 'backup' });
    expect((row.attempts as Array<{ status: number; key: string }>).map(({ status, key }) => [status, key])).toEqual([
      [401, 'default'],
      [200, 'backup'],
    ]);

    await callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: account.token, stream });
    expect(fake.requests.map(keyOf)).toEqual([first, second, second]);
    const states = async () => (await listed(account)).map(({ label, state }) => [label, state]);
    await eventually(async () => ((await states())[0]?.[1] === 'failing' ? true : undefined));
    expect(await states()).toEqual([
      ['default', 'failing'],
      ['backup', 'ok'],
    ]);

    // Saved again, the key is used again at once.
    await proxy.saveKey(account.token, 'prov-b', first);
    await callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: account.token, stream });
    expect(fake.requests.map(keyOf).at(-1)).toBe(first);
    expect((await listed(account)).map(({ state }) => state)).toEqual(['ok', 'ok']);
  },
);

test("every key resting: the provider's last 429 goes back as sent, with its Retry-After", async () => {
  const { account, first, second } = await pooledAccount('prov-b');
  const fake = proxy.fakes.fakes['prov-b'];
  fake.next({ status: 429, headers: { 'retry-after': '40' }, errorMessage: 'first key throttled' });
  fake.next({ status: 429, headers: { 'retry-after': '50' }, errorMessage: 'second key throttled' });
  const error = (await callThroughSdk({
    proxyBase: proxy.proxyBase,
    provider: 'prov-b',
    token: account.token,
    stream: false,
  }).catch((e: unknown) => e)) as { status: number; message: string; headers: Headers };
  expect(error.status).toBe(429);
  expect(error.message).toContain('second key throttled');
  expect(error.headers.get('retry-after')).toBe('50');
  expect(fake.requests.map(keyOf)).toEqual([first, second]);
  const [row] = await proxy.rowsFor(account.token, [error.headers.get('x-proxy-request-id')!]);
  expect(row).toMatchObject({ status_code: 429, cost_usd: 0, key_label: 'backup' });
  expect((row.attempts as Array<{ key: string }>).map(({ key }) => key)).toEqual(['default', 'backup']);

  // The CSV export names the key too.
  const [header, ...lines] = csvRows(await (await proxy.api('/api/logs.csv', { token: account.token })).text());
  const line = lines.find((cells) => cells[header.indexOf('id')] === row.id)!;
  expect([line[header.indexOf('key_label')], line[header.indexOf('key_hint')]]).toEqual([
    'backup',
    `…${second.slice(-4)}`,
  ]);
});

describe('the management API', () => {
  test('labelled keys: saved, listed with their state, removed; the unlabelled routes are the default key; each change audited', async () => {
    const account = await proxy.createAccount('pool-routes');
    const key = await proxy.saveKey(account.token, 'prov-d');
    const spare = await saveLabelled(account, 'prov-b' as Pooled, 'spare-1');
    const keys = await listed(account);
    expect(keys.map(({ provider, label, hint, state }) => ({ provider, label, hint, state }))).toEqual(
      expect.arrayContaining([
        { provider: 'prov-d', label: 'default', hint: `…${key.slice(-4)}`, state: 'ok' },
        { provider: 'prov-b', label: 'spare-1', hint: `…${spare.slice(-4)}`, state: 'ok' },
      ]),
    );
    expect(keys).toHaveLength(2);
    expect(JSON.stringify(keys)).not.toContain(key);

    expect((await proxy.api('/api/keys/prov-b/spare-1', { method: 'DELETE', token: account.token })).status).toBe(204);
    expect((await proxy.api('/api/keys/prov-d', { method: 'DELETE', token: account.token })).status).toBe(204);
    expect(await listed(account)).toEqual([]);

    const audit = await proxy.api('/api/audit', { token: account.token });
    const entries = ((await audit.json()) as { items: Array<Record<string, unknown>> }).items;
    expect(
      entries
        .filter((e) => String(e.action).startsWith('key.'))
        .map(({ action, target, before, after }) => ({ action, target, before, after })),
    ).toEqual([
      { action: 'key.removed', target: 'prov-d', before: { hint: `…${key.slice(-4)}` }, after: null },
      { action: 'key.removed', target: 'prov-b/spare-1', before: { hint: `…${spare.slice(-4)}` }, after: null },
      { action: 'key.saved', target: 'prov-b/spare-1', before: null, after: { hint: `…${spare.slice(-4)}` } },
      { action: 'key.saved', target: 'prov-d', before: null, after: { hint: `…${key.slice(-4)}` } },
    ]);
  });

  test('a label must be plain and short; a provider holds at most 10 keys', async () => {
    const account = await proxy.createAccount('pool-limits');
    for (const label of ['Upper', '-dash', 'a'.repeat(33), 'sp ace', 'dot.ted']) {
      const response = await proxy.api(`/api/keys/prov-b/${encodeURIComponent(label)}`, {
        method: 'PUT',
        token: account.token,
        body: { key: fakeProviderKey('prov-b') },
      });
      expect([label, response.status]).toEqual([label, 400]);
    }
    for (let i = 0; i < 10; i++) await saveLabelled(account, 'prov-b', `k${i}`);
    const eleventh = await proxy.api('/api/keys/prov-b/k10', {
      method: 'PUT',
      token: account.token,
      body: { key: fakeProviderKey('prov-b') },
    });
    expect(eleventh.status).toBe(400);
    expect(await eleventh.text()).toContain('at most 10 keys');
    // Saving again under a label it has is a change, not an eleventh key.
    await saveLabelled(account, 'prov-b', 'k3');
  });

  test('a viewer lists keys but cannot save or remove one', async () => {
    const created = await proxy.api('/api/tokens', {
      token: proxy.account.token,
      body: { name: 'pool viewer', role: 'viewer' },
    });
    const viewer = ((await created.json()) as { token: string }).token;
    proxy.secrets.add(viewer);
    expect((await proxy.api('/api/keys', { token: viewer })).status).toBe(200);
    const put = await proxy.api('/api/keys/prov-b/extra', {
      method: 'PUT',
      token: viewer,
      body: { key: fakeProviderKey('prov-b') },
    });
    expect(put.status).toBe(403);
    expect((await proxy.api('/api/keys/prov-b/extra', { method: 'DELETE', token: viewer })).status).toBe(403);
  });
});
