/**
 * What one instance learns of an account's stored keys reaches another instance on the same store
 * within the documented bound (`PROVIDER_KEY_CACHE_SECONDS`: SECURITY.md, "Keys"; docs/fallbacks.md,
 * "Key pools"), with the key read it already makes; the instance that learnt it applies it at once.
 * The bound is 1 s here, so the test waits that long, not the default 30 s: a request sent once the
 * bound has passed must see the change. A key saved, removed, or resting after a 429. The other
 * instance's warm, healthy requests make no store call for it (test/integration/store-calls.test.ts
 * counts them). Each test in its own account, on the same two instances.
 */
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { eventually } from '../support/patience';
import { fakeProviderKey, startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callProxy, expectChatError } from './support/requests';

const BOUND_MS = 1_000;

let fakes: AllFakes;
let first: ProxyServer;
let second: ProxyServer;

beforeAll(async () => {
  fakes = await startAllFakes();
  const tablePrefix = `keys${Date.now().toString(36)}-`;
  const env = { PROVIDER_KEY_CACHE_SECONDS: String(BOUND_MS / 1000) };
  first = await startProxy({ fakes, tablePrefix, env });
  second = await startProxy({ fakes, tablePrefix, env, sharesKeysWith: first });
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await fakes?.close();
});
beforeEach(() => fakes.reset());

const sentKeys = () => fakes.fakes['prov-b'].requests.map((r) => r.headers.authorization?.replace('Bearer ', ''));
const waitUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/** A new account with a prov-b key, saved through the first instance (both instances print neither). */
async function accountWithKey(): Promise<{ account: Account; key: string }> {
  const account = await first.createAccount('key-instances');
  second.secrets.add(account.token);
  const key = fakeProviderKey('prov-b');
  second.secrets.add(key);
  await first.saveKey(account.token, 'prov-b', key);
  return { account, key };
}

const asking = (account: Account) => (proxy: ProxyServer, prompt: string) =>
  callProxy(proxy, { provider: 'prov-b', token: account.token, prompt });

test('a rotated key: at once on the instance that saved it, within the bound on the other', async () => {
  const { account, key: oldKey } = await accountWithKey();
  const ask = asking(account);
  // The second instance reads and keeps the current key.
  expect((await ask(second, 'before rotation')).status).toBe(200);
  expect(sentKeys().at(-1)).toBe(oldKey);

  const newKey = fakeProviderKey('prov-b');
  second.secrets.add(newKey);
  await first.saveKey(account.token, 'prov-b', newKey);
  const changedAt = Date.now();
  expect((await ask(first, 'rotated, same instance')).status).toBe(200);
  expect(sentKeys().at(-1)).toBe(newKey);

  await waitUntil(changedAt + BOUND_MS);
  expect((await ask(second, 'rotated, other instance')).status).toBe(200);
  expect(sentKeys().at(-1)).toBe(newKey);
});

test('a removed key: the other instance stops forwarding with it within the bound', async () => {
  const { account } = await accountWithKey();
  const ask = asking(account);
  expect((await ask(second, 'before removal')).status).toBe(200);
  const removed = await first.api('/api/keys/prov-b', { method: 'DELETE', token: account.token });
  expect(removed.status).toBe(204);
  const removedAt = Date.now();

  await waitUntil(removedAt + BOUND_MS);
  const calls = fakes.fakes['prov-b'].requests.length;
  const answer = await ask(second, 'removed, other instance');
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(expectChatError(answer.text).message).toMatch(/key/i);
  expect(fakes.fakes['prov-b'].requests.length).toBe(calls);
});

test('a key resting after a 429 on one instance is skipped by the other within the bound', async () => {
  const { account, key: defaultKey } = await accountWithKey();
  const ask = asking(account);
  const backup = fakeProviderKey('prov-b');
  first.secrets.add(backup);
  second.secrets.add(backup);
  const saved = await first.api('/api/keys/prov-b/backup', {
    method: 'PUT',
    token: account.token,
    body: { key: backup },
  });
  expect(saved.status).toBe(200);
  await waitUntil(Date.now() + BOUND_MS);
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
  const storedAt = await eventually(async () => {
    const answer = await first.api('/api/keys', { token: account.token });
    const { keys } = (await answer.json()) as { keys: Array<{ provider: string; label: string; state: string }> };
    return keys.find((k) => k.provider === 'prov-b' && k.label === 'default')?.state === 'cooling'
      ? Date.now()
      : undefined;
  });
  expect(storedAt).toBeDefined();
  await waitUntil(storedAt! + BOUND_MS);
  expect((await ask(second, 'other instance, after the bound')).status).toBe(200);
  expect(sentKeys().slice(4)).toEqual([backup]);
});
