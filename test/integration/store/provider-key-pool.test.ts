/**
 * The provider-key store's pools on DynamoDB Local: a provider's keys in pool order (`default`,
 * then by label), an item saved before pools read as the `default` key, a mark kept only for the
 * version of the key it was noted for (a key saved again or removed meanwhile is left alone).
 */
import { newAccountId } from '../../../lambda/auth/proxy-token';
import { DynamoProviderKeyStore } from '../../../lambda/keys/dynamodb/provider-key-store';
import type { StoredProviderKey } from '../../../lambda/keys/ports';
import { accountPk } from '../../../lambda/store/dynamodb/account-partition';
import { createTestTables } from '../../support/tables';

let tables: Awaited<ReturnType<typeof createTestTables>>;
let store: DynamoProviderKeyStore;

beforeAll(async () => {
  tables = await createTestTables();
  store = new DynamoProviderKeyStore(tables.clients.doc, tables.tables.accounts);
});
afterAll(() => tables.clients.raw.destroy());

const key = (label: string, updatedAt = '2026-05-01T00:00:00.000Z'): StoredProviderKey => ({
  provider: 'prov-b',
  label,
  secret: { ciphertext: Buffer.from(label), iv: Buffer.alloc(12), wrappedKey: Buffer.from('w'), keyRef: 'local:test' },
  hint: `…${label.slice(-4)}`,
  updatedAt,
});

test("a provider's keys in pool order; another provider's are not in it", async () => {
  const accountId = newAccountId();
  for (const label of ['zeta', 'alpha', 'default']) await store.put(accountId, key(label));
  await store.put(accountId, { ...key('default'), provider: 'prov-c' });
  expect((await store.pool(accountId, 'prov-b')).map((k) => k.label)).toEqual(['default', 'alpha', 'zeta']);
  expect((await store.pool(accountId, 'prov-c')).map((k) => k.label)).toEqual(['default']);
  expect(await store.delete(accountId, 'prov-b', 'alpha')).toBe(true);
  expect((await store.pool(accountId, 'prov-b')).map((k) => k.label)).toEqual(['default', 'zeta']);
});

test('an item saved before pools (no label) is the default key', async () => {
  const accountId = newAccountId();
  await tables.clients.doc.send({
    operation: 'PutItem',
    input: {
      TableName: tables.tables.accounts,
      Item: {
        pk: accountPk(accountId),
        sk: 'KEY#prov-b',
        provider: 'prov-b',
        ciphertext: Buffer.from('old'),
        iv: Buffer.alloc(12),
        wrapped_key: Buffer.from('w'),
        key_ref: 'local:test',
        hint: '…1234',
        updated_at: '2025-01-01T00:00:00.000Z',
      },
    },
  });
  expect(await store.pool(accountId, 'prov-b')).toEqual([
    expect.objectContaining({ provider: 'prov-b', label: 'default', hint: '…1234' }),
  ]);
});

test('a mark is kept for the version it was noted for; a key saved again starts clean and ignores a late mark', async () => {
  const accountId = newAccountId();
  const old = key('backup', '2026-05-01T00:00:00.000Z');
  await store.put(accountId, old);
  await store.mark(accountId, old, { state: 'cooling', until: 123 });
  expect((await store.pool(accountId, 'prov-b'))[0]?.mark).toEqual({ state: 'cooling', until: 123 });
  await store.mark(accountId, old, { state: 'failing' });
  expect((await store.pool(accountId, 'prov-b'))[0]?.mark).toEqual({ state: 'failing' });

  await store.put(accountId, key('backup', '2026-05-02T00:00:00.000Z'));
  expect((await store.pool(accountId, 'prov-b'))[0]?.mark).toBeUndefined();
  await store.mark(accountId, old, { state: 'failing' });
  expect((await store.pool(accountId, 'prov-b'))[0]?.mark).toBeUndefined();

  // A removed key is not brought back by a late mark.
  await store.delete(accountId, 'prov-b', 'backup');
  await store.mark(accountId, old, { state: 'failing' });
  expect(await store.pool(accountId, 'prov-b')).toEqual([]);
});
