import { fakeProviderKey, startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

describe('management API', () => {
  it('admin routes refuse a wrong admin key', async () => {
    const response = await fetch(`${proxy.url}/api/admin/accounts`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-the-admin-key' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    const noAccount = await proxy.api('/api/admin/accounts/nosuchaccount123/tokens', { body: {} });
    expect(noAccount.status).toBe(404);
  });

  it('provider keys: saved once, listed as a hint only, deleted', async () => {
    const account = await proxy.createAccount('keys');
    const key = await proxy.saveKey(account.token, 'prov-c', 'gemini-secret-key-abcd9876');
    const listed = await proxy.api('/api/keys', { token: account.token });
    const text = await listed.text();
    expect(text).not.toContain(key);
    expect(JSON.parse(text).keys).toEqual([
      { provider: 'prov-c', label: 'default', hint: '…9876', updated_at: expect.any(String), state: 'ok' },
    ]);
    expect(
      (await proxy.api('/api/keys/prov-x', { method: 'PUT', token: account.token, body: { key: 'whatever-123456' } }))
        .status,
    ).toBe(404);
    expect(
      (await proxy.api('/api/keys/prov-c', { method: 'PUT', token: account.token, body: { key: 42 } })).status,
    ).toBe(400);
    expect((await proxy.api('/api/keys/prov-c', { method: 'DELETE', token: account.token })).status).toBe(204);
    expect((await (await proxy.api('/api/keys', { token: account.token })).json()).keys).toEqual([]);
  });

  it('a key replaced or removed through the server applies to the very next request (the per-instance key cache is kept in step)', async () => {
    const account = await proxy.createAccount('key-change');
    const upstream = proxy.fakes.fakes['prov-b'];
    const call = () =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: account.token, stream: false });
    const first = await proxy.saveKey(account.token, 'prov-b');
    await call();
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${first}`);
    const second = fakeProviderKey('prov-b');
    proxy.secrets.add(second);
    await proxy.saveKey(account.token, 'prov-b', second);
    await call();
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${second}`);
    expect((await proxy.api('/api/keys/prov-b', { method: 'DELETE', token: account.token })).status).toBe(204);
    await expect(call()).rejects.toMatchObject({ status: 400, message: expect.stringContaining('No ') });
    const tokens = (await (await proxy.api('/api/tokens', { token: account.token })).json()).tokens as Array<{
      token_id: string;
      last_used_at?: string;
    }>;
    // Set by the gate call of each proxied request (the last one here passed the gate, then found no key).
    expect(Date.parse(tokens.find((t) => t.token_id === account.tokenId)!.last_used_at!)).toBeGreaterThan(
      Date.now() - 60_000,
    );
  });

  it('tokens: list without secrets (marking the caller), create a proxy-only app token, revoke it', async () => {
    const account = await proxy.createAccount('tokens');
    const created = await proxy.api('/api/tokens', { token: account.token, body: { name: 'ci job' } });
    expect(created.status).toBe(201);
    const app = (await created.json()) as { token_id: string; token: string; scopes: string[] };
    proxy.secrets.add(app.token);
    expect(app.scopes).toEqual(['proxy']);

    const listed = await proxy.api('/api/tokens', { token: account.token });
    const text = await listed.text();
    expect(text).not.toContain(app.token.slice(-32));
    expect(text).not.toContain(account.token.slice(-32));
    const tokens = JSON.parse(text).tokens as Array<Record<string, unknown>>;
    expect(tokens).toHaveLength(2);
    expect(tokens.find((t) => t.token_id === account.tokenId)).toMatchObject({
      current: true,
      scopes: ['proxy', 'manage'],
    });
    expect(tokens.find((t) => t.token_id === app.token_id)).toMatchObject({ current: false, name: 'ci job' });

    // The app token proxies but cannot manage.
    expect((await proxy.api('/api/tokens', { token: app.token })).status).toBe(403);
    expect((await proxy.api(`/api/tokens/${app.token_id}`, { method: 'DELETE', token: account.token })).status).toBe(
      204,
    );
    const after = (
      (await (await proxy.api('/api/tokens', { token: account.token })).json()).tokens as Array<Record<string, unknown>>
    ).find((t) => t.token_id === app.token_id);
    expect(after?.revoked_at).toEqual(expect.any(String));
  });

  it('logs: newest first, filtered, and paged with a cursor', async () => {
    const account = await proxy.createAccount('logs');
    await proxy.saveKey(account.token, 'prov-b');
    for (let i = 0; i < 5; i++) {
      await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${account.token}`,
          'content-type': 'application/json',
          'x-proxy-user': i % 2 ? 'odd' : 'even',
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `n${i}` }] }),
      }).then((r) => r.text());
    }
    const all = await proxy.waitForRows(account.token, 5);
    expect(all).toHaveLength(5);
    const times = all.map((r) => r.ts as string);
    expect([...times].sort().reverse()).toEqual(times);

    const page1 = await (await proxy.api('/api/logs?limit=2', { token: account.token })).json();
    expect(page1.items).toHaveLength(2);
    const page2 = await (
      await proxy.api(`/api/logs?limit=2&cursor=${page1.next_cursor}`, { token: account.token })
    ).json();
    const page3 = await (
      await proxy.api(`/api/logs?limit=2&cursor=${page2.next_cursor}`, { token: account.token })
    ).json();
    const paged = [...page1.items, ...page2.items, ...page3.items].map((r: { id: string }) => r.id);
    expect(paged).toEqual(all.map((r) => r.id));

    const odd = await (await proxy.api('/api/logs?requester=odd', { token: account.token })).json();
    expect(odd.items.map((r: { requester: string }) => r.requester)).toEqual(['odd', 'odd']);
    const none = await (await proxy.api('/api/logs?status=error', { token: account.token })).json();
    expect(none.items).toEqual([]);
    const bad = await proxy.api('/api/logs?limit=0', { token: account.token });
    expect(bad.status).toBe(400);
  });
});
