/**
 * A pooled key's cool-down noted by one instance reaches another instance on the same store with
 * the pool read it already makes (docs/fallbacks.md, "Key pools"): within `PROVIDER_KEY_CACHE_SECONDS`
 * (1 s here, so the test waits that long, not the default 30 s). The instance that got the 429
 * applies it at once. The other instance's warm, healthy requests make no store call for it
 * (test/integration/store-calls.test.ts counts them).
 */
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { fakeProviderKey, startProxy, type ProxyServer } from '../support/proxy-server';
import { eventually } from '../support/patience';
import { callProxy } from './support/requests';

const BOUND_MS = 1_000;

let fakes: AllFakes;
let first: ProxyServer;
let second: ProxyServer;

beforeAll(async () => {
  fakes = await startAllFakes();
  const tablePrefix = `pool${Date.now().toString(36)}-`;
  const env = { PROVIDER_KEY_CACHE_SECONDS: String(BOUND_MS / 1000) };
  first = await startProxy({ fakes, tablePrefix, env });
  second = await startProxy({ fakes, tablePrefix, env, sharesKeysWith: first });
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await fakes?.close();
});

const sentKeys = () => fakes.fakes['prov-b'].requests.map((r) => r.headers.authorization?.replace('Bearer ', ''));
const ask = (proxy: ProxyServer, prompt: string) =>
  callProxy(proxy, { provider: 'prov-b', token: first.account.token, prompt });

test('a key resting after a 429 on one instance is skipped by the other within the bound', async () => {
  const defaultKey = first.storedKeys['prov-b'];
  const backup = fakeProviderKey('prov-b');
  first.secrets.add(backup);
  second.secrets.add(backup);
  const saved = await first.api('/api/keys/prov-b/backup', {
    method: 'PUT',
    token: first.account.token,
    body: { key: backup },
  });
  expect(saved.status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, BOUND_MS));
  // The second instance reads and keeps the pool, both keys healthy.
  expect((await ask(second, 'before the 429')).status).toBe(200);
  expect(sentKeys()).toEqual([defaultKey]);

  fakes.fakes['prov-b'].next({ status: 429, headers: { 'retry-after': '120' } });
  expect((await ask(first, 'throttled on the first instance')).status).toBe(200);
  expect(sentKeys().slice(1)).toEqual([defaultKey, backup]);
  // At once on the instance that got the 429.
  expect((await ask(first, 'same instance, next request')).status).toBe(200);
  expect(sentKeys().slice(3)).toEqual([backup]);

  // Once the mark is stored (in the background) and the bound has passed, the other instance skips the key too.
  const stored = await eventually(async () => {
    const answer = await first.api('/api/keys', { token: first.account.token });
    const { keys } = (await answer.json()) as { keys: Array<{ provider: string; label: string; state: string }> };
    return keys.find((k) => k.provider === 'prov-b' && k.label === 'default')?.state === 'cooling'
      ? Date.now()
      : undefined;
  });
  expect(stored).toBeDefined();
  await new Promise((resolve) => setTimeout(resolve, BOUND_MS));
  expect((await ask(second, 'other instance, after the bound')).status).toBe(200);
  expect(sentKeys().slice(4)).toEqual([backup]);
});
