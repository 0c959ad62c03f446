import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { ALERT_WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  await proxy.stop();
});

interface Entry {
  id: string;
  at: string;
  actor: string;
  address: string | null;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

async function auditOf(token: string, query = ''): Promise<{ items: Entry[]; next_cursor: string | null }> {
  const response = await proxy.api(`/api/audit${query}`, { token });
  expect(response.status).toBe(200);
  return (await response.json()) as { items: Entry[]; next_cursor: string | null };
}

async function ok(response: Promise<Response>, status = 200): Promise<Record<string, unknown>> {
  const answer = await response;
  const text = await answer.text();
  expect([answer.status, text]).toEqual([status, expect.any(String)]);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

describe('the audit log', () => {
  it('records every kind of management change with its actor, address and before/after, never a secret', async () => {
    const account = await proxy.createAccount('audited');
    const admin = account.token;
    const actor = `token:${account.tokenId}`;
    const providerKey = await proxy.saveKey(admin, 'prov-a');
    const replacement = await proxy.saveKey(admin, 'prov-a');
    await ok(proxy.api('/api/keys/prov-a', { method: 'DELETE', token: admin }), 204);
    const app = await ok(proxy.api('/api/tokens', { token: admin, body: { name: 'app' } }), 201);
    proxy.secrets.add(app.token as string);
    const appId = app.token_id as string;
    await ok(proxy.api(`/api/tokens/${appId}`, { method: 'PUT', token: admin, body: { tags: { team: 'search' } } }));
    await ok(
      proxy.api(`/api/tokens/${appId}/limits`, { method: 'PUT', token: admin, body: { requests_per_minute: 7 } }),
    );
    await ok(
      proxy.api(`/api/tokens/${appId}/budget`, {
        method: 'PUT',
        token: admin,
        body: { limit_usd: 5, period: 'month' },
      }),
    );
    await ok(
      proxy.api(`/api/tokens/${appId}/budget`, { method: 'PUT', token: admin, body: { limit_usd: 9, period: 'day' } }),
    );
    await ok(
      proxy.api('/api/budgets/requesters/alice', {
        method: 'PUT',
        token: admin,
        body: { limit_usd: 1, period: 'day' },
      }),
    );
    await ok(proxy.api('/api/budgets/requesters/alice', { method: 'DELETE', token: admin }), 204);
    await ok(proxy.api('/api/prices/house-model', { method: 'PUT', token: admin, body: { input: 1, output: 2 } }));
    await ok(proxy.api('/api/prices/house-model', { method: 'DELETE', token: admin }), 204);
    const webhook = await ok(
      proxy.api('/api/alerts/webhook', {
        method: 'PUT',
        token: admin,
        body: { url: 'https://hooks.example.com/services/T0/B0/abcdef' },
      }),
    );
    await ok(proxy.api('/api/alerts/webhook', { method: 'DELETE', token: admin }), 204);
    await ok(proxy.api(`/api/tokens/${appId}`, { method: 'DELETE', token: admin }), 204);

    const { items } = await auditOf(admin);
    const text = JSON.stringify(items);
    for (const secret of [
      providerKey,
      replacement,
      app.token as string,
      webhook.secret as string,
      account.token,
      'T0/B0/abcdef',
    ])
      expect(text).not.toContain(secret);
    // Newest first: the reverse of the order the changes were made in.
    expect(items.map((e) => [e.action, e.actor])).toEqual(
      [
        ['account.created', 'admin-key'],
        ['key.saved', actor],
        ['key.saved', actor],
        ['key.removed', actor],
        ['token.issued', actor],
        ['token.tags', actor],
        ['token.limits', actor],
        ['budget.set', actor],
        ['budget.set', actor],
        ['budget.set', actor],
        ['budget.removed', actor],
        ['price.set', actor],
        ['price.removed', actor],
        ['webhook.set', actor],
        ['webhook.removed', actor],
        ['token.revoked', actor],
      ].reverse(),
    );
    const sorted = [...items].sort((a, b) => b.at.localeCompare(a.at));
    expect(items.map((e) => e.id)).toEqual(sorted.map((e) => e.id));
    expect(items.every((e) => e.address === '127.0.0.1')).toBe(true);
    const find = (action: string, target?: string) =>
      items.filter((e) => e.action === action && (!target || e.target === target));
    const hint = (key: string) => ({ hint: `…${key.slice(-4)}` });
    expect(find('key.saved').map((e) => [e.before, e.after])).toEqual([
      [hint(providerKey), hint(replacement)],
      [null, hint(providerKey)],
    ]);
    expect(find('key.removed')[0]).toMatchObject({ target: 'prov-a', before: hint(replacement), after: null });
    expect(find('budget.set', `token:${appId}`).map((e) => [e.before, e.after])).toEqual([
      [
        { limit_usd: 5, period: 'month' },
        { limit_usd: 9, period: 'day' },
      ],
      [null, { limit_usd: 5, period: 'month' }],
    ]);
    expect(find('price.set')[0]).toMatchObject({
      target: 'house-model',
      before: null,
      after: { model: 'house-model', input: 1, output: 2 },
    });
    expect(find('token.tags')[0]).toMatchObject({ target: appId, before: {}, after: { team: 'search' } });
    expect(find('token.limits')[0]).toMatchObject({
      before: { requests_per_minute: null },
      after: { requests_per_minute: 7 },
    });
    expect(find('webhook.set')[0]).toMatchObject({ before: null, after: { url: 'https://hooks.example.com/…cdef' } });
    expect(find('token.issued')[0]).toMatchObject({
      target: appId,
      after: { name: 'app', scopes: ['proxy'], role: null },
    });

    // Another account sees none of it; a viewer of this one reads it all.
    const other = await proxy.createAccount('other');
    expect((await auditOf(other.token)).items.map((e) => e.action)).toEqual(['account.created']);
    const viewer = await ok(proxy.api('/api/tokens', { token: admin, body: { role: 'viewer' } }), 201);
    proxy.secrets.add(viewer.token as string);
    expect((await auditOf(viewer.token as string)).items).toHaveLength(items.length + 1);
  });

  it('pages newest first with a cursor, and filters by action, actor and time', async () => {
    const account = await proxy.createAccount('paged');
    for (let i = 0; i < 5; i++)
      await ok(
        proxy.api(`/api/prices/model-${i}`, { method: 'PUT', token: account.token, body: { input: i + 1, output: 1 } }),
      );
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await auditOf(account.token, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.items.map((e) => e.target));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(['model-4', 'model-3', 'model-2', 'model-1', 'model-0', account.accountId]);
    expect(pages).toBeGreaterThanOrEqual(3);
    const prices = await auditOf(account.token, '?action=price.set&limit=3');
    expect(prices.items.map((e) => e.target)).toEqual(['model-4', 'model-3', 'model-2']);
    expect((await auditOf(account.token, '?actor=admin-key')).items.map((e) => e.action)).toEqual(['account.created']);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await auditOf(account.token, `?from=${future}`)).items).toEqual([]);
    const refused = await proxy.api('/api/audit?action=key.stolen', { token: account.token });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { field: string } }).error.field).toBe('action');
    const badCursor = await proxy.api('/api/audit?cursor=bm9wZQ', { token: account.token });
    expect(badCursor.status).toBe(400);
  });
});
