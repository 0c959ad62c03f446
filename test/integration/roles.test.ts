import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

/** A management token of `role` in the suite's account, issued by its first (admin) token. */
async function tokenOfRole(role: string): Promise<{ token: string; tokenId: string }> {
  const response = await proxy.api('/api/tokens', {
    token: proxy.account.token,
    body: { name: `${role} token`, role },
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { token: string; token_id: string; scopes: string[]; role: string };
  expect(body).toMatchObject({ scopes: ['manage'], role });
  proxy.secrets.add(body.token);
  return { token: body.token, tokenId: body.token_id };
}

async function errorOf(response: Response) {
  return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } };
}

describe('roles of management tokens', () => {
  it('a viewer reads everything and changes nothing: 403 in the API error shape', async () => {
    const viewer = await tokenOfRole('viewer');
    const app = await proxy.api('/api/tokens', { token: proxy.account.token, body: { name: 'app' } });
    const appId = ((await app.json()) as { token_id: string }).token_id;

    for (const path of [
      '/api/tokens',
      '/api/keys',
      '/api/prices',
      '/api/budgets',
      '/api/logs',
      '/api/stats',
      '/api/alerts',
    ])
      expect([path, (await proxy.api(path, { token: viewer.token })).status]).toEqual([path, 200]);

    const refused = [
      { path: `/api/tokens/${appId}/budget`, body: { limit_usd: 5, period: 'month' } },
      { path: '/api/keys/prov-a', body: { key: 'prov-a-key-0123456789' } },
      { path: '/api/prices/my-model', body: { input: 1, output: 2 } },
    ];
    for (const { path, body } of refused) {
      const answer = await errorOf(await proxy.api(path, { method: 'PUT', token: viewer.token, body }));
      expect(answer).toEqual({
        status: 403,
        body: { error: { code: 'forbidden', message: expect.stringContaining('needs the admin role'), field: null } },
      });
    }
    // Nothing was changed by the refused calls.
    const prices = (await (await proxy.api('/api/prices', { token: viewer.token })).json()) as { prices: unknown[] };
    expect(prices.prices).toEqual([]);
    expect((await proxy.api(`/api/tokens/${appId}`, { method: 'DELETE', token: viewer.token })).status).toBe(403);
    expect((await proxy.api('/api/tokens', { token: viewer.token, body: { name: 'x' } })).status).toBe(403);
  });

  it('a member issues, edits and revokes its own tokens, but not the others, and sets no budget', async () => {
    const member = await tokenOfRole('member');
    const own = await proxy.api('/api/tokens', { token: member.token, body: { name: 'member app' } });
    expect(own.status).toBe(201);
    const ownId = ((await own.json()) as { token_id: string }).token_id;
    const others = await proxy.api('/api/tokens', { token: proxy.account.token, body: { name: 'admin app' } });
    const otherId = ((await others.json()) as { token_id: string }).token_id;

    expect(
      (await proxy.api(`/api/tokens/${ownId}`, { method: 'PUT', token: member.token, body: { tags: { team: 'a' } } }))
        .status,
    ).toBe(200);
    const notOwn = await errorOf(
      await proxy.api(`/api/tokens/${otherId}/limits`, {
        method: 'PUT',
        token: member.token,
        body: { requests_per_minute: 5 },
      }),
    );
    expect(notOwn).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await proxy.api(`/api/tokens/${otherId}`, { method: 'DELETE', token: member.token })).status).toBe(403);
    // A member may not hand out roles, nor set budgets.
    expect((await proxy.api('/api/tokens', { token: member.token, body: { role: 'viewer' } })).status).toBe(403);
    expect(
      (
        await proxy.api(`/api/tokens/${ownId}/budget`, {
          method: 'PUT',
          token: member.token,
          body: { limit_usd: 1, period: 'day' },
        })
      ).status,
    ).toBe(403);
    expect((await proxy.api(`/api/tokens/${ownId}`, { method: 'DELETE', token: member.token })).status).toBe(204);

    const listed = (await (await proxy.api('/api/tokens', { token: member.token })).json()) as {
      tokens: Array<{ token_id: string; role: string | null; created_by: string | null }>;
    };
    expect(listed.tokens.find((t) => t.token_id === ownId)).toMatchObject({
      role: null,
      created_by: `token:${member.tokenId}`,
    });
    expect(listed.tokens.find((t) => t.token_id === member.tokenId)).toMatchObject({ role: 'member' });
  });

  it('tokens issued without a role keep what they could do before roles: an admin', async () => {
    const account = await proxy.createAccount('no-roles');
    const listed = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
      tokens: Array<{ token_id: string; role: string | null }>;
    };
    expect(listed.tokens).toEqual([expect.objectContaining({ token_id: account.tokenId, role: 'admin' })]);
    expect(
      (
        await proxy.api('/api/prices/some-model', {
          method: 'PUT',
          token: account.token,
          body: { input: 1, output: 1 },
        })
      ).status,
    ).toBe(200);
    // The admin key issues a token of any role, and refuses an unknown one naming the field.
    const viewer = await proxy.api(`/api/admin/accounts/${account.accountId}/tokens`, {
      body: { scopes: ['manage'], role: 'viewer' },
    });
    expect(viewer.status).toBe(201);
    const viewerToken = ((await viewer.json()) as { token: string }).token;
    proxy.secrets.add(viewerToken);
    expect(
      (
        await proxy.api('/api/keys/prov-b', {
          method: 'PUT',
          token: viewerToken,
          body: { key: 'prov-b-key-0123456789' },
        })
      ).status,
    ).toBe(403);
    const unknown = await errorOf(
      await proxy.api(`/api/admin/accounts/${account.accountId}/tokens`, { body: { role: 'owner' } }),
    );
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', field: 'role' } } });
  });
});
