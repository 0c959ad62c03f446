/**
 * No credential the proxy did not set reaches a provider (SECURITY.md,
 * "Tokens"): the headers other SDKs put keys in (Azure-style `api-key`,
 * Gemini's `x-goog-api-key`, `proxy-authorization`) are dropped, and so is a
 * header of any name quoting the proxy token or its secret part — in stored and
 * pass-through mode, for every provider.
 */
import type { ProviderId } from '../fakes/start-fakes';
import { callProxy, PROVIDERS } from '../reliability/support/requests';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { tokenSecret } from './support/observed';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const ownKey = (provider: ProviderId) => `${provider}-caller-key-0123456789abcdef`;

describe.each(['stored', 'pass-through'] as const)('%s mode', (mode) => {
  test.each(PROVIDERS)('%s: only the provider key the proxy set goes upstream', async (provider) => {
    const token = proxy.account.token;
    if (mode === 'pass-through') proxy.secrets.add(ownKey(provider));
    const result = await callProxy(proxy, {
      provider,
      token,
      providerKey: mode === 'pass-through' ? ownKey(provider) : undefined,
      prompt: `credential headers ${mode} ${provider}`,
      headers: {
        'api-key': token,
        'x-goog-api-key': token,
        'proxy-authorization': `Basic ${Buffer.from(`user:${token}`).toString('base64')}`,
        'x-custom-auth': `token=${token}`,
        'x-secret-part': tokenSecret(token),
        'x-harmless': 'kept',
      },
    });
    expect(result.status).toBe(200);
    const sent = proxy.fakes.fakes[provider].requests.at(-1)!.headers;
    const values = Object.entries(sent)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
    expect(values).not.toContain(token);
    expect(values).not.toContain(tokenSecret(token));
    for (const name of ['api-key', 'x-goog-api-key', 'proxy-authorization', 'x-custom-auth', 'x-secret-part'])
      expect(sent).not.toHaveProperty(name);
    expect(sent['x-harmless']).toBe('kept');
    const expectedKey = mode === 'stored' ? proxy.storedKeys[provider] : ownKey(provider);
    expect(provider === 'prov-a' ? sent['x-api-key'] : sent.authorization).toBe(
      provider === 'prov-a' ? expectedKey : `Bearer ${expectedKey}`,
    );
  });
});

describe.each(['stored', 'pass-through'] as const)('%s mode, query string', (mode) => {
  test.each(PROVIDERS)(
    '%s: a query parameter quoting the proxy token stays with the proxy; the others go upstream as sent',
    async (provider) => {
      const token = proxy.account.token;
      if (mode === 'pass-through') proxy.secrets.add(ownKey(provider));
      const result = await callProxy(proxy, {
        provider,
        token,
        providerKey: mode === 'pass-through' ? ownKey(provider) : undefined,
        prompt: `credential query ${mode} ${provider}`,
        query: `key=${encodeURIComponent(token)}&kept=a%2Fb&part=${tokenSecret(token)}&also=1`,
      });
      expect(result.status).toBe(200);
      const sent = proxy.fakes.fakes[provider].requests.at(-1)!;
      expect(decodeURIComponent(sent.path)).not.toContain(tokenSecret(token));
      expect(sent.path.endsWith('?kept=a%2Fb&also=1')).toBe(true);
    },
  );
});
