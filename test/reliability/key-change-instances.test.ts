/**
 * A stored key changed or removed through one local instance reaches another instance on the
 * same store within the documented bound (`PROVIDER_KEY_CACHE_SECONDS`, SECURITY.md, "Keys"); the
 * instance that made the change applies it at once. The bound is set to 1 s here
 * so the test waits that long, not the default 30 s: a request sent once the bound has passed
 * since the change answered must use the new key (the other instance read its copy before it).
 */
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { fakeProviderKey, startProxy, type ProxyServer } from '../support/proxy-server';
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

const sentKey = () => fakes.fakes['prov-b'].requests.at(-1)!.headers.authorization?.replace('Bearer ', '');
const waitUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

async function ask(proxy: ProxyServer, prompt: string) {
  return callProxy(proxy, { provider: 'prov-b', token: first.account.token, prompt });
}

test('a rotated key: at once on the instance that saved it, within the bound on the other', async () => {
  const oldKey = first.storedKeys['prov-b'];
  // The second instance reads and keeps the current key.
  expect((await ask(second, 'before rotation')).status).toBe(200);
  expect(sentKey()).toBe(oldKey);

  const newKey = fakeProviderKey('prov-b');
  second.secrets.add(newKey);
  await first.saveKey(first.account.token, 'prov-b', newKey);
  const changedAt = Date.now();
  expect((await ask(first, 'rotated, same instance')).status).toBe(200);
  expect(sentKey()).toBe(newKey);

  await waitUntil(changedAt + BOUND_MS);
  expect((await ask(second, 'rotated, other instance')).status).toBe(200);
  expect(sentKey()).toBe(newKey);
});

test('a removed key: the other instance stops forwarding with it within the bound', async () => {
  expect((await ask(second, 'before removal')).status).toBe(200);
  const removed = await first.api('/api/keys/prov-b', { method: 'DELETE', token: first.account.token });
  expect(removed.status).toBe(204);
  const removedAt = Date.now();

  await waitUntil(removedAt + BOUND_MS);
  const calls = fakes.fakes['prov-b'].requests.length;
  const answer = await ask(second, 'removed, other instance');
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(expectChatError(answer.text).message).toMatch(/key/i);
  expect(fakes.fakes['prov-b'].requests.length).toBe(calls);
});
