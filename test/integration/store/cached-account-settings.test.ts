/**
 * The per-instance cache of an account's failover settings, over the real store on DynamoDB Local:
 * a warm read makes no call; a change through the same instance applies at once, one through another
 * instance within ACCOUNT_SETTINGS_CACHE_MS (docs/fallbacks.md, "Defaults"); two changes made at once
 * through two instances both land; each account reads only its own settings.
 */
import { newAccountId } from '../../../lambda/auth/proxy-token';
import {
  ACCOUNT_SETTINGS_CACHE_MS,
  CachedAccountSettings,
} from '../../../lambda/account-settings/cached-account-settings';
import { DynamoAccountSettingsStore } from '../../../lambda/account-settings/dynamodb/account-settings-store';
import type { AccountFailover } from '../../../lambda/account-settings/failover-settings';
import { notingClient } from '../../support/noting-client';
import { createTestTables } from '../../support/tables';

let tables: Awaited<ReturnType<typeof createTestTables>>;
let clock = Date.parse('2026-05-01T00:00:00Z');
const sent: string[] = [];

beforeAll(async () => {
  tables = await createTestTables();
});
afterAll(() => tables.clients.raw.destroy());

function instance(): CachedAccountSettings {
  const counting = notingClient(tables.clients.doc, sent);
  return new CachedAccountSettings(new DynamoAccountSettingsStore(counting, tables.tables.accounts), () => clock);
}

const withDefaults = (key: string, fallbacks: string[]) => (current: AccountFailover) => ({
  ...current,
  fallbacks: { ...current.fallbacks, [key]: fallbacks },
});

test('a warm read makes no store call, also for an account with no settings; read again once its time is up', async () => {
  const accountId = newAccountId();
  const a = instance();
  sent.length = 0;
  expect(await a.get(accountId)).toEqual({ fallbacks: {} });
  expect(await a.get(accountId)).toEqual({ fallbacks: {} });
  expect(sent).toEqual(['GetItem']);
  clock += ACCOUNT_SETTINGS_CACHE_MS;
  await a.get(accountId);
  expect(sent).toEqual(['GetItem', 'GetItem']);
});

test('a change through the same instance applies at once; through another one, within the cache time', async () => {
  const accountId = newAccountId();
  const [a, b] = [instance(), instance()];
  await a.update(accountId, withDefaults('prov-b/gpt-4o', ['gpt-4o-mini']));
  expect((await b.get(accountId)).fallbacks).toEqual({ 'prov-b/gpt-4o': ['gpt-4o-mini'] });
  const { before, after } = await a.update(accountId, (current) => ({ ...current, firstTokenMs: 2_000 }));
  expect(before).toEqual({ fallbacks: { 'prov-b/gpt-4o': ['gpt-4o-mini'] } });
  expect(after).toEqual({ fallbacks: { 'prov-b/gpt-4o': ['gpt-4o-mini'] }, firstTokenMs: 2_000 });
  expect((await a.get(accountId)).firstTokenMs).toBe(2_000);
  expect((await b.get(accountId)).firstTokenMs).toBeUndefined();
  clock += ACCOUNT_SETTINGS_CACHE_MS - 1;
  expect((await b.get(accountId)).firstTokenMs).toBeUndefined();
  clock += 1;
  expect((await b.get(accountId)).firstTokenMs).toBe(2_000);
});

test('two changes at once through two instances both land; each account reads only its own', async () => {
  const [first, second] = [newAccountId(), newAccountId()];
  const [a, b] = [instance(), instance()];
  await Promise.all([
    a.update(first, withDefaults('prov-b/gpt-4o', ['gpt-4o-mini'])),
    b.update(first, withDefaults('prov-a/claude-sonnet-4-6', ['claude-sonnet-4-5'])),
    a.update(second, withDefaults('prov-b/gpt-4.1', ['gpt-4.1-mini'])),
  ]);
  const fresh = instance();
  expect((await fresh.get(first)).fallbacks).toEqual({
    'prov-b/gpt-4o': ['gpt-4o-mini'],
    'prov-a/claude-sonnet-4-6': ['claude-sonnet-4-5'],
  });
  expect((await fresh.get(second)).fallbacks).toEqual({ 'prov-b/gpt-4.1': ['gpt-4.1-mini'] });
});
