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
    const saved = await proxy.api(`/api/keys/${id}`, { method: 'PUT', token: account.token, body: { key: `key-for-${id}-0000` } });
    expect(saved.status).toBe(200);
  }
  const listed = (await (await proxy.api('/api/keys', { token: account.token })).json()) as { keys: Array<{ provider: string }> };
  expect(listed.keys.map((k) => k.provider).sort()).toEqual(PROVIDER_CATALOG.map((p) => p.id).sort());

  const refused = await proxy.api('/api/keys/prov-q', { method: 'PUT', token: account.token, body: { key: 'whatever-123456' } });
  expect(refused.status).toBe(404);
  const ids = PROVIDER_CATALOG.map((p) => p.id).join(', ');
  expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(`Unknown provider "prov-q". Providers: ${ids}.`);
});
