/**
 * The per-instance cache of stored provider keys, over the real store on DynamoDB Local: a warm
 * read makes no call; a change made through the same instance applies at once, one made through
 * another instance within PROVIDER_KEY_CACHE_MS; a missing key is never remembered.
 */
import { newAccountId } from '../../../lambda/auth/proxy-token';
import { CachedProviderKeys, PROVIDER_KEY_CACHE_MS } from '../../../lambda/keys/cached-provider-keys';
import { DynamoProviderKeyStore } from '../../../lambda/keys/dynamodb/provider-key-store';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import type { StoredProviderKey } from '../../../lambda/keys/ports';
import { createTestTables } from '../../support/tables';

let tables: Awaited<ReturnType<typeof createTestTables>>;
let clock = Date.parse('2026-05-01T00:00:00Z');
const sent: string[] = [];

beforeAll(async () => {
  tables = await createTestTables();
});
afterAll(() => tables.clients.raw.destroy());

/** One instance: its own cache over the real store, with every store call noted. */
function instance(readAnswersLateMs = 0): CachedProviderKeys {
  const doc = tables.clients.doc;
  const late = <T>(answer: T) => new Promise<T>((resolve) => setTimeout(() => resolve(answer), readAnswersLateMs));
  const counting: DocumentClient = {
    send: ((command: StoreCommand) => {
      sent.push(command.operation);
      const answer = doc.send(command as never);
      return command.operation === 'Query' && readAnswersLateMs ? answer.then(late) : answer;
    }) as DocumentClient['send'],
  };
  return new CachedProviderKeys(new DynamoProviderKeyStore(counting, tables.tables.accounts), () => clock);
}

const key = (hint: string): StoredProviderKey => ({
  provider: 'prov-b',
  label: 'default',
  secret: { ciphertext: Buffer.from(hint), iv: Buffer.alloc(12), wrappedKey: Buffer.from('w'), keyRef: 'local:test' },
  hint,
  updatedAt: new Date(clock).toISOString(),
});

test('a warm read makes no store call; the entry is read again once its time is up', async () => {
  const accountId = newAccountId();
  const a = instance();
  await a.put(accountId, key('1111'));
  sent.length = 0;
  expect((await a.pool(accountId, 'prov-b'))[0]?.hint).toBe('1111');
  expect((await a.pool(accountId, 'prov-b'))[0]?.hint).toBe('1111');
  expect(sent).toEqual(['Query']);
  clock += PROVIDER_KEY_CACHE_MS;
  await a.pool(accountId, 'prov-b');
  expect(sent).toEqual(['Query', 'Query']);
});

test('a change through the same instance applies at once; through another one, within the cache time', async () => {
  const accountId = newAccountId();
  const [a, b] = [instance(), instance()];
  await a.put(accountId, key('1111'));
  expect((await b.pool(accountId, 'prov-b'))[0]?.hint).toBe('1111');
  await a.put(accountId, key('2222'));
  expect((await a.pool(accountId, 'prov-b'))[0]?.hint).toBe('2222');
  expect((await b.pool(accountId, 'prov-b'))[0]?.hint).toBe('1111');
  clock += PROVIDER_KEY_CACHE_MS - 1;
  expect((await b.pool(accountId, 'prov-b'))[0]?.hint).toBe('1111');
  clock += 1;
  expect((await b.pool(accountId, 'prov-b'))[0]?.hint).toBe('2222');
  expect(await a.delete(accountId, 'prov-b', 'default')).toBe(true);
  expect(await a.pool(accountId, 'prov-b')).toEqual([]);
});

test('a missing key is not remembered: one saved after a "no key" answer is used at once', async () => {
  const accountId = newAccountId();
  const [a, b] = [instance(), instance()];
  expect(await b.pool(accountId, 'prov-b')).toEqual([]);
  await a.put(accountId, key('3333'));
  expect((await b.pool(accountId, 'prov-b'))[0]?.hint).toBe('3333');
});

test('a read whose answer comes after a change through this instance does not keep the old key', async () => {
  const accountId = newAccountId();
  const a = instance(300);
  await a.put(accountId, key('4444'));
  clock += PROVIDER_KEY_CACHE_MS;
  const reading = a.pool(accountId, 'prov-b');
  await a.put(accountId, key('5555'));
  await reading;
  sent.length = 0;
  expect((await a.pool(accountId, 'prov-b'))[0]?.hint).toBe('5555');
  expect(sent).toEqual(['Query']);
});
