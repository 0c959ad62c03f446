/**
 * The per-instance cache of account prices, over the real store on DynamoDB Local: a warm read makes
 * no call, an account without prices included; a change made through the same instance applies at
 * once, one made through another instance within ACCOUNT_PRICE_CACHE_MS (docs/usage-and-pricing.md,
 * "Account prices"). Each account reads only its own prices.
 */
import { newAccountId } from '../../../lambda/auth/proxy-token';
import type { AccountPrice } from '../../../lambda/account-prices/account-price';
import { ACCOUNT_PRICE_CACHE_MS, CachedAccountPrices } from '../../../lambda/account-prices/cached-account-prices';
import { DynamoAccountPriceStore } from '../../../lambda/account-prices/dynamodb/account-price-store';
import { notingClient } from '../../support/noting-client';
import { createTestTables } from '../../support/tables';

let tables: Awaited<ReturnType<typeof createTestTables>>;
let clock = Date.parse('2026-05-01T00:00:00Z');
const sent: string[] = [];

beforeAll(async () => {
  tables = await createTestTables();
});
afterAll(() => tables.clients.raw.destroy());

function instance(): CachedAccountPrices {
  const counting = notingClient(tables.clients.doc, sent);
  return new CachedAccountPrices(new DynamoAccountPriceStore(counting, tables.tables.accounts), () => clock);
}

const perToken = (model: string, input: number): AccountPrice => ({
  model,
  rates: { input, output: 2 * input },
  updated_at: new Date(clock).toISOString(),
});

test('a warm read makes no store call, also for an account without prices; read again once its time is up', async () => {
  const accountId = newAccountId();
  const a = instance();
  sent.length = 0;
  expect(await a.list(accountId)).toEqual([]);
  expect(await a.list(accountId)).toEqual([]);
  expect(sent).toEqual(['Query']);
  clock += ACCOUNT_PRICE_CACHE_MS;
  await a.list(accountId);
  expect(sent).toEqual(['Query', 'Query']);
});

test('a change through the same instance applies at once; through another one, within the cache time', async () => {
  const accountId = newAccountId();
  const [a, b] = [instance(), instance()];
  await a.put(accountId, perToken('ft:one', 1));
  expect((await b.list(accountId)).map((p) => p.rates?.input)).toEqual([1]);
  await a.put(accountId, perToken('FT:One', 3));
  expect(await a.list(accountId)).toEqual([perToken('ft:one', 3)]);
  expect((await b.list(accountId))[0].rates?.input).toBe(1);
  clock += ACCOUNT_PRICE_CACHE_MS - 1;
  expect((await b.list(accountId))[0].rates?.input).toBe(1);
  clock += 1;
  expect((await b.list(accountId))[0].rates?.input).toBe(3);
  expect(await a.delete(accountId, 'ft:ONE')).toBe(true);
  expect(await a.list(accountId)).toEqual([]);
  expect(await a.delete(accountId, 'ft:one')).toBe(false);
});

test('an account reads only its own prices, priced_as entries included', async () => {
  const [first, second] = [newAccountId(), newAccountId()];
  const a = instance();
  await a.put(first, { model: 'house-*', priced_as: 'gpt-4o', updated_at: new Date(clock).toISOString() });
  await a.put(second, perToken('house-x', 5));
  expect(await a.list(first)).toEqual([
    { model: 'house-*', priced_as: 'gpt-4o', updated_at: new Date(clock).toISOString() },
  ]);
  expect((await a.list(second)).map((p) => p.model)).toEqual(['house-x']);
});
