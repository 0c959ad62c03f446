/**
 * Who can reach what: revoked tokens fail at once, scopes are enforced, one
 * account never reads another's logs, stats, keys, tokens or cache entries,
 * and a stored key's ciphertext only opens for the account and provider it
 * was sealed for.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../../lambda/store/tables';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callProxy, expectManagementError, expectEndpointError, upstreamCalls } from '../reliability/support/requests';
import { allRows, rowOf, statsTotals } from '../reliability/support/rows';
import { sdkDocumentClient } from '../reliability/support/dynamo';
import { Observed } from './support/observed';
import { eventually } from '../support/patience';

const TABLE_PREFIX = `iso${Date.now().toString(36)}-`;

let proxy: ProxyServer;
let a: Account;
let b: Account;
let bKey: string;
const seen = new Observed();

beforeAll(async () => {
  proxy = await startProxy({ tablePrefix: TABLE_PREFIX });
  a = proxy.account;
  b = await proxy.createAccount('second');
  bKey = await proxy.saveKey(b.token, 'prov-b');
});
afterAll(async () => {
  await proxy?.stop();
});

const api = (path: string, token: string, init: { method?: string; body?: unknown } = {}) =>
  seen.fetch(proxy.url + path, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

/** Issued outside `seen`: the one answer that may carry a new token. */
async function issueToken(accountId: string, scopes: string[]): Promise<{ token_id: string; token: string }> {
  const response = await proxy.api(`/api/admin/accounts/${accountId}/tokens`, {
    body: { name: scopes.join('+'), scopes },
  });
  expect(response.status).toBe(201);
  const issued = (await response.json()) as { token_id: string; token: string };
  proxy.secrets.add(issued.token);
  return issued;
}

describe('revocation', () => {
  test('a token revoked by the admin fails at once, for proxying and for the management API', async () => {
    const issued = await issueToken(a.accountId, ['proxy', 'manage']);
    expect((await callProxy(proxy, { provider: 'prov-b', token: issued.token })).status).toBe(200);
    expect((await api(`/api/admin/tokens/${issued.token_id}`, proxy.adminKey, { method: 'DELETE' })).status).toBe(204);
    for (const provider of ['prov-a', 'prov-b'] as ProviderId[]) {
      const before = upstreamCalls(proxy);
      const refused = await callProxy(proxy, { provider, token: issued.token });
      expect(refused.status).toBe(401);
      expect(expectEndpointError(provider, refused.text)).toMatch(/revoked/i);
      expect(upstreamCalls(proxy)).toBe(before);
    }
    expect((await api('/api/logs', issued.token)).status).toBe(401);
    // Pass-through with the revoked token identifying the account is refused too.
    expect(
      (await callProxy(proxy, { provider: 'prov-c', token: issued.token, providerKey: 'client-own-key-revoked-01' }))
        .status,
    ).toBe(401);
  });

  test('a token the account revokes itself fails at once', async () => {
    const issued = await issueToken(a.accountId, ['proxy']);
    expect((await callProxy(proxy, { provider: 'prov-d', token: issued.token })).status).toBe(200);
    expect((await api(`/api/tokens/${issued.token_id}`, a.token, { method: 'DELETE' })).status).toBe(204);
    expect((await callProxy(proxy, { provider: 'prov-d', token: issued.token })).status).toBe(401);
  });
});

describe('scopes', () => {
  test('a proxy-only token (made with POST /api/tokens) proxies but gets 403 from every management route', async () => {
    const made = await proxy.api('/api/tokens', { token: a.token, body: { name: 'app' } });
    expect(made.status).toBe(201);
    const app = (await made.json()) as { token: string; token_id: string; scopes: string[] };
    proxy.secrets.add(app.token);
    expect(app.scopes).toEqual(['proxy']);
    expect((await callProxy(proxy, { provider: 'prov-e', token: app.token })).status).toBe(200);
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/logs'],
      ['GET', '/api/stats'],
      ['GET', '/api/keys'],
      ['PUT', '/api/keys/prov-b', { key: 'replacement-key-0000000000' }],
      ['DELETE', '/api/keys/prov-b'],
      ['GET', '/api/tokens'],
      ['POST', '/api/tokens', {}],
      ['DELETE', `/api/tokens/${a.tokenId}`],
    ];
    for (const [method, path, body] of routes) {
      const answer = await api(path, app.token, { method, body });
      expect(`${method} ${path} ${answer.status}`).toBe(`${method} ${path} 403`);
      expect(expectManagementError(answer.text).code).toBe('forbidden');
    }
    // Nothing was changed by the refused calls: the account's own token and key still work.
    expect((await callProxy(proxy, { provider: 'prov-b', token: a.token })).status).toBe(200);
    // And it is no admin either.
    expect((await api('/api/admin/accounts', app.token, { method: 'POST', body: {} })).status).toBe(401);
  });

  test('a manage-only token cannot proxy (403 in the endpoint shape, nothing forwarded)', async () => {
    const manager = await issueToken(a.accountId, ['manage']);
    for (const provider of ['prov-a', 'prov-c'] as ProviderId[]) {
      const before = upstreamCalls(proxy);
      const refused = await callProxy(proxy, { provider, token: manager.token });
      expect(refused.status).toBe(403);
      expectEndpointError(provider, refused.text);
      expect(upstreamCalls(proxy)).toBe(before);
    }
    expect((await api('/api/logs', manager.token)).status).toBe(200);
  });
});

describe("one account never reaches another's data", () => {
  test("logs, stats, keys and tokens of account A are invisible to account B's token", async () => {
    const fromA = await callProxy(proxy, {
      provider: 'prov-b',
      token: a.token,
      headers: { 'x-proxy-user': 'alice-of-a' },
    });
    const fromB = await callProxy(proxy, {
      provider: 'prov-b',
      token: b.token,
      headers: { 'x-proxy-user': 'bob-of-b' },
    });
    await rowOf(proxy, a.token, fromA.requestId);
    await rowOf(proxy, b.token, fromB.requestId);

    const bRows = await allRows(proxy, b.token);
    expect(bRows.map((row) => row.id)).toEqual([fromB.requestId]);
    expect(JSON.parse((await api('/api/logs?requester=alice-of-a', b.token)).text).items).toEqual([]);
    // A cursor taken from A's listing only pages through B's own rows.
    const aPage = JSON.parse((await api('/api/logs?limit=1', a.token)).text) as { next_cursor: string | null };
    expect(aPage.next_cursor).toBeTruthy();
    const withACursor = JSON.parse(
      (await api(`/api/logs?limit=500&cursor=${encodeURIComponent(aPage.next_cursor!)}`, b.token)).text,
    ) as { items: Array<{ id: string }> };
    expect(withACursor.items.every((row) => row.id === fromB.requestId)).toBe(true);

    // The overview folds rows in from the usage stream shortly after they are stored.
    const stats = await eventually(async () => {
      const totals = await statsTotals(proxy, b.token);
      return totals.requests > 0 ? totals : undefined;
    });
    expect(stats?.requests).toBe(1);
    const bStats = JSON.parse((await api('/api/stats', b.token)).text) as {
      by_requester: Array<{ requester: string }>;
    };
    expect(bStats.by_requester.map((r) => r.requester)).toEqual(['bob-of-b']);

    const bKeys = JSON.parse((await api('/api/keys', b.token)).text) as {
      keys: Array<{ provider: string; hint: string }>;
    };
    expect(bKeys.keys).toEqual([
      { provider: 'prov-b', label: 'default', hint: `…${bKey.slice(-4)}`, updated_at: expect.any(String), state: 'ok' },
    ]);

    const bTokens = JSON.parse((await api('/api/tokens', b.token)).text) as { tokens: Array<{ token_id: string }> };
    expect(bTokens.tokens.every((t) => t.token_id.startsWith(`${b.accountId}_`))).toBe(true);
    expect((await api(`/api/tokens/${a.tokenId}`, b.token, { method: 'DELETE' })).status).toBe(404);
    expect((await api(`/api/admin/accounts/${a.accountId}/tokens`, b.token, { method: 'POST', body: {} })).status).toBe(
      401,
    );

    // B deleting "its" prov-a key touches nothing of A's; A's token and key still work.
    expect((await api('/api/keys/prov-a', b.token, { method: 'DELETE' })).status).toBe(204);
    const aStill = await callProxy(proxy, { provider: 'prov-a', token: a.token });
    expect(aStill.status).toBe(200);
    expect(proxy.fakes.fakes['prov-a'].requests.at(-1)!.headers['x-api-key']).toBe(proxy.storedKeys['prov-a']);
  });

  test("B's identical request misses A's cache entry, in stored and pass-through mode", async () => {
    const prompt = `isolated cache ${Date.now()}`;
    expect(
      (await callProxy(proxy, { provider: 'prov-b', token: a.token, prompt, cache: 'true' })).headers.get(
        'x-proxy-cache',
      ),
    ).toBe('MISS');
    expect(
      (await callProxy(proxy, { provider: 'prov-b', token: a.token, prompt, cache: 'true' })).headers.get(
        'x-proxy-cache',
      ),
    ).toBe('HIT');

    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    const stored = await callProxy(proxy, { provider: 'prov-b', token: b.token, prompt, cache: 'true' });
    expect(stored.headers.get('x-proxy-cache')).toBe('MISS');
    expect(fake.requests.length).toBe(before + 1);
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${bKey}`);

    const c = await proxy.createAccount('third');
    const passThrough = await callProxy(proxy, {
      provider: 'prov-b',
      token: c.token,
      providerKey: 'client-own-key-isolation-01',
      prompt,
      cache: 'true',
    });
    proxy.secrets.add('client-own-key-isolation-01');
    expect(passThrough.headers.get('x-proxy-cache')).toBe('MISS');
    expect(fake.requests.length).toBe(before + 2);
  });
});

describe('encryption context binds a stored key to its account and provider', () => {
  const doc = sdkDocumentClient();
  const table = tableNames({}, TABLE_PREFIX).accounts;

  async function copySealedKey(
    from: { accountId: string; provider: string },
    to: { accountId: string; provider: string },
  ): Promise<void> {
    const { Item } = await doc.send(
      new GetCommand({ TableName: table, Key: { pk: `ACCOUNT#${from.accountId}`, sk: `KEY#${from.provider}` } }),
    );
    expect(Item).toBeDefined();
    await doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: `ACCOUNT#${to.accountId}`, sk: `KEY#${to.provider}` },
        UpdateExpression:
          'SET ciphertext = :c, iv = :i, wrapped_key = :w, key_ref = :r, provider = :p, hint = :h, updated_at = :u',
        ExpressionAttributeValues: {
          ':c': Item!.ciphertext,
          ':i': Item!.iv,
          ':w': Item!.wrapped_key,
          ':r': Item!.key_ref,
          ':p': to.provider,
          ':h': Item!.hint,
          ':u': Item!.updated_at,
        },
      }),
    );
  }

  async function expectNotOpened(provider: ProviderId, token: string, victimKey: string): Promise<void> {
    const fake = proxy.fakes.fakes[provider];
    const fakeBefore = fake.requests.length;
    const before = upstreamCalls(proxy);
    const answer = await callProxy(proxy, { provider, token, prompt: 'with a copied key' });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expectEndpointError(provider, answer.text);
    // No upstream call at all, so none carrying the victim's key.
    expect(upstreamCalls(proxy)).toBe(before);
    expect(fake.requests.length).toBe(fakeBefore);
    expect(proxy.output()).not.toContain(victimKey);
  }

  // The items are written straight into the table, behind the server's back: the accounts and providers
  // they land in have never been read by it, so no key of theirs is in its per-instance key cache.
  test("A's sealed prov-b key copied into another account's item does not open there: the request fails and nothing goes upstream", async () => {
    const other = await proxy.createAccount('copied-into');
    await copySealedKey(
      { accountId: a.accountId, provider: 'prov-b' },
      { accountId: other.accountId, provider: 'prov-b' },
    );
    await expectNotOpened('prov-b', other.token, proxy.storedKeys['prov-b']);
  });

  test("a sealed prov-b key copied to the same account's prov-d item does not open for prov-d", async () => {
    const owner = await proxy.createAccount('copied-across');
    const victimKey = await proxy.saveKey(owner.token, 'prov-b');
    await copySealedKey(
      { accountId: owner.accountId, provider: 'prov-b' },
      { accountId: owner.accountId, provider: 'prov-d' },
    );
    await expectNotOpened('prov-d', owner.token, victimKey);
  });
});

test('no token or key appeared in any answer of this file', () => {
  expect(seen.count).toBeGreaterThan(20);
  expect(seen.leaks([...proxy.secrets, proxy.adminKey])).toEqual([]);
});
