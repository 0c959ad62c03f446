/** The management API accepts exactly the catalog's providers (lambda/providers/catalog.ts, docs/providers.md). */
import { PROVIDER_CATALOG } from '../../lambda/providers/catalog';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

test('a key can be saved for every catalog provider, and for nothing else', async () => {
  const account = await proxy.createAccount('catalog');
  for (const { id } of PROVIDER_CATALOG) {
    const saved = await proxy.api(`/api/keys/${id}`, {
      method: 'PUT',
      token: account.token,
      body: { key: `key-for-${id}-0000` },
    });
    expect(saved.status).toBe(200);
  }
  const listed = (await (await proxy.api('/api/keys', { token: account.token })).json()) as {
    keys: Array<{ provider: string }>;
  };
  expect(listed.keys.map((k) => k.provider).sort()).toEqual(PROVIDER_CATALOG.map((p) => p.id).sort());

  const refused = await proxy.api('/api/keys/prov-q', {
    method: 'PUT',
    token: account.token,
    body: { key: 'whatever-123456' },
  });
  expect(refused.status).toBe(404);
  const ids = PROVIDER_CATALOG.map((p) => p.id).join(', ');
  expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
    `Unknown provider "prov-q". Providers: ${ids}.`,
  );
});

/** A minimal valid request of each dialect, as its official SDK sends it. */
const MAIN_REQUEST = {
  messages: (token: string) => ({
    path: '/v1/messages',
    headers: { 'x-api-key': token, 'anthropic-version': '2023-06-01' },
    body: { max_tokens: 8 },
  }),
  chat: (token: string) => ({ path: '/chat/completions', headers: { authorization: `Bearer ${token}` }, body: {} }),
};

test('a request without a saved key names the provider by its catalog display name', async () => {
  const account = await proxy.createAccount('no-keys');
  // A provider reached through AWS needs no saved key: the proxy signs with its own credentials (bedrock-sdk.test.ts).
  for (const entry of PROVIDER_CATALOG.filter((e) => e.dialect !== 'bedrock-runtime')) {
    const request = MAIN_REQUEST[entry.dialect](account.token);
    const response = await fetch(`${proxy.proxyBase}${entry.sdkBasePath}${request.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...request.headers },
      body: JSON.stringify({ model: entry.exampleModel, messages: [{ role: 'user', content: 'hi' }], ...request.body }),
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toContain(`No ${entry.displayName} key is saved for this account (provider ${entry.id}).`);
  }
});
