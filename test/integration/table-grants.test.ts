/**
 * The DynamoDB calls the code sends, recorded at run time between the proxy and DynamoDB Local,
 * against what lambda/store/table-calls.ts declares and the stack grants (least-privilege.test.ts
 * checks the grants are exactly the declared actions). The proxy function is driven through every
 * management route and the proxy path (stored key, cache, tags, requester); the stream consumer
 * folds the rows. Each sends only actions granted to its own function, on the tables it is given;
 * in AWS anything else would be refused.
 */
import { randomBytes } from 'node:crypto';
import {
  actionsByTable,
  CONSUMER_TABLE_CALLS,
  PROXY_TABLE_CALLS,
  tableGrants,
  type DynamoAction,
  type TableCalls,
} from '../../lambda/store/table-calls';
import { LOCAL_ALERT_QUEUE_PK } from '../../lambda/alerts/dynamodb/alert-queue';
import { tableNames, type TableId } from '../../lambda/store/tables';
import type { UsageRow } from '../../lambda/usage/usage-row';
import { startStatsConsumer, type StatsConsumerProcess } from '../reliability/support/stats-consumer';
import { eventually } from '../support/patience';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { callThroughSdk } from '../support/sdk-clients';
import { startStoreCallCounter, type StoreCall, type StoreCallCounter } from '../support/store-call-counter';

/** Calls on the tables' items; the rest (table creation, stream reads) run only on the local server. */
const DATA_OPERATIONS = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'TransactGetItems',
  'ExecuteStatement',
]);

let proxyCalls: StoreCallCounter;
let consumerCalls: StoreCallCounter;
let proxy: InProcessProxy;
let consumer: StatsConsumerProcess | undefined;

beforeAll(async () => {
  [proxyCalls, consumerCalls] = await Promise.all([
    startStoreCallCounter(process.env.DYNAMODB_ENDPOINT!),
    startStoreCallCounter(process.env.DYNAMODB_ENDPOINT!),
  ]);
  proxy = await startInProcessProxy({ env: { DYNAMODB_ENDPOINT: proxyCalls.endpoint } });
});
afterAll(async () => {
  await consumer?.kill();
  await proxy?.close();
  await Promise.all([proxyCalls?.close(), consumerCalls?.close()]);
});

/** `table:action` for each data call, by the table's id. */
function sent(calls: readonly StoreCall[]): Set<string> {
  const idOf = new Map(Object.entries(proxy.deps.config.tables).map(([id, name]) => [name, id as TableId]));
  return new Set(
    calls
      .filter((call) => DATA_OPERATIONS.has(call.operation))
      .flatMap((call) => call.actions.map(({ table, action }) => `${idOf.get(table) ?? table}:${action}`)),
  );
}

/** A call on the local alert queue's partition, by the key or key condition it names. */
function onLocalAlertQueue(call: StoreCall): boolean {
  const { Item, Key, ExpressionAttributeValues } = call.body as Record<string, Record<string, unknown> | undefined>;
  const pk = (Item ?? Key ?? {}).pk ?? ExpressionAttributeValues?.[':pk'];
  return JSON.stringify(pk) === JSON.stringify({ S: LOCAL_ALERT_QUEUE_PK });
}

function granted(calls: readonly TableCalls[]): Set<string> {
  return new Set([...actionsByTable(calls)].flatMap(([table, actions]) => actions.map((a) => `${table}:${a}`)));
}

async function ok(path: string, init: { token?: string; method?: string; body?: unknown } = {}) {
  const response = await proxy.api(path, init);
  expect([200, 201, 204]).toContain(response.status);
  const text = await response.text();
  return (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as Record<string, string>;
}

test('the proxy function sends only the actions the stack grants it, on its own tables', async () => {
  const token = proxy.token;
  // Management: accounts and tokens, keys, token settings, budgets, alerts.
  const account = await ok('/api/admin/accounts', { body: { name: 'grants' } });
  proxy.secrets.add(account.token!);
  const extra = await ok(`/api/admin/accounts/${account.account_id}/tokens`, { body: { name: 'extra' } });
  proxy.secrets.add(extra.token!);
  await ok(`/api/admin/tokens/${extra.token_id}`, { method: 'DELETE' });
  const app = await ok('/api/tokens', { token, body: { name: 'app' } });
  proxy.secrets.add(app.token!);
  await ok(`/api/tokens/${app.token_id}`, { token, method: 'PUT', body: { tags: { team: 'search' } } });
  await ok(`/api/tokens/${app.token_id}/limits`, { token, method: 'PUT', body: { requests_per_minute: 50 } });
  await ok(`/api/tokens/${app.token_id}/budget`, { token, method: 'PUT', body: { limit_usd: 5, period: 'day' } });
  await ok('/api/budgets/requesters/intern', { token, method: 'PUT', body: { limit_usd: 2, period: 'day' } });
  await ok('/api/budgets/tags/team/search', { token, method: 'PUT', body: { limit_usd: 3, period: 'month' } });
  await ok('/api/alerts/webhook', { token, method: 'PUT', body: { url: 'https://hooks.example.com/grants' } });
  const key = `prov-b-key-${randomBytes(8).toString('hex')}`;
  proxy.secrets.add(key);
  await ok('/api/keys/prov-b', { token, method: 'PUT', body: { key } });
  await ok('/api/roles/grant-viewers', { token, method: 'PUT', body: { role: 'viewer' } });
  await ok('/api/fallbacks/prov-b/gpt-4o', { token, method: 'PUT', body: { fallbacks: ['gpt-4o-mini'] } });
  await ok('/api/fallback-limits', { token, method: 'PUT', body: { first_token_timeout: 5 } });
  const fallbacks = [{ provider: 'prov-b', model: 'gpt-4o', fallbacks: ['gpt-4.1'] }];
  await ok(`/api/tokens/${app.token_id}/fallbacks`, { token, method: 'PUT', body: { fallbacks } });

  // The proxy path: a stored key, a tagged and budgeted app token, a named requester, the cache.
  const call = (headers: Record<string, string>, appToken = token) =>
    callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: appToken, stream: false, headers });
  const first = await call({ 'x-proxy-cache': 'true', 'x-proxy-user': 'intern' }, app.token!);
  await call({ 'x-proxy-cache': 'true', 'x-proxy-user': 'intern' }, app.token!);
  await callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-a', token, stream: true });
  await proxy.settled();

  // Reads: every list and the row.
  for (const path of [
    '/api/keys',
    '/api/tokens',
    '/api/budgets',
    '/api/alerts',
    '/api/alerts/webhook',
    '/api/stats',
    '/api/roles',
    '/api/audit',
    '/api/fallbacks',
  ])
    await ok(path, { token });
  await ok('/api/logs', { token });
  await ok('/api/logs.csv', { token });
  await ok(`/api/logs/${first.requestId}`, { token });
  // Removals.
  await ok('/api/keys/prov-b', { token, method: 'DELETE' });
  await ok(`/api/tokens/${app.token_id}/budget`, { token, method: 'DELETE' });
  await ok('/api/budgets/requesters/intern', { token, method: 'DELETE' });
  await ok('/api/budgets/tags/team/search', { token, method: 'DELETE' });
  await ok('/api/alerts/webhook', { token, method: 'DELETE' });
  await ok('/api/roles/grant-viewers', { token, method: 'DELETE' });
  await ok('/api/fallbacks/prov-b/gpt-4o', { token, method: 'DELETE' });
  await ok(`/api/tokens/${app.token_id}`, { token, method: 'DELETE' });
  await proxy.settled();

  const actions = sent(proxyCalls.calls);
  expect([...actions].filter((action) => !granted(PROXY_TABLE_CALLS).has(action))).toEqual([]);
  // And every grant is used: all of them were sent above but two that need rarer turns.
  const rare = [
    // The batched read sends a GetItem for a lone gate item (a gate rebuilt while no other read waits).
    'rateLimits:GetItem',
    // A cached answer replaced by a shorter one has its surplus parts deleted in batches (cache-fill tests).
    'cache:BatchWriteItem',
  ];
  expect([...actions].sort()).toEqual([...granted(PROXY_TABLE_CALLS)].filter((a) => !rare.includes(a)).sort());

  // DynamoDB Local checks no IAM condition: the attributes each of its rollup writes names are checked here.
  const allowed = tableGrants(PROXY_TABLE_CALLS).find((g) => g.table === 'usageStats' && g.attributes)!.attributes!;
  const rollupWrites = proxyCalls.calls.filter(
    (c) => c.operation === 'UpdateItem' && c.tables.includes(proxy.deps.config.tables.usageStats),
  );
  expect(rollupWrites.length).toBeGreaterThan(0);
  for (const { body } of rollupWrites) {
    const named = [
      ...Object.keys(body.Key as object),
      ...Object.values((body.ExpressionAttributeNames ?? {}) as Record<string, string>),
    ];
    expect(named.filter((attribute) => !allowed.includes(attribute))).toEqual([]);
    // Every attribute in its expressions is a placeholder, so the names above are all it touches.
    const expressions = `${String(body.UpdateExpression)} ${String(body.ConditionExpression ?? '')}`;
    const bare = expressions
      .replace(/[#:]\w+/g, '')
      .match(/[A-Za-z_]\w*/g)
      ?.filter((word) => !['SET', 'REMOVE', 'OR', 'AND', 'attribute_not_exists'].includes(word));
    expect(bare ?? []).toEqual([]);
  }
});

test('the stream consumer sends only the actions the stack grants it', async () => {
  const prefix = proxy.deps.config.tables.accounts.replace(/accounts$/, '');
  expect(tableNames({}, prefix)).toEqual(proxy.deps.config.tables);
  // A row of an hour long sealed, as a replayed spool brings one: the consumer marks that hour's and
  // day's kept sums stale, then sums them again from their rollup items and keeps them.
  const logs = (await (await proxy.api('/api/logs?limit=1', { token: proxy.token })).json()) as { items: UsageRow[] };
  const late = new Date(Date.now() - 3 * 3_600_000).toISOString();
  await proxy.deps.usageLog.write({ ...logs.items[0], id: `late-${randomBytes(4).toString('hex')}`, ts: late });
  consumer = await startStatsConsumer(prefix, undefined, { DYNAMODB_ENDPOINT: consumerCalls.endpoint });
  // Folded: the rollups now hold the rows written above.
  const folded = await eventually(async () => {
    const stats = (await (await proxy.api('/api/stats', { token: proxy.token })).json()) as {
      totals?: { requests?: number };
    };
    return (stats.totals?.requests ?? 0) >= 3 ? stats : undefined;
  });
  expect(folded).toBeDefined();
  // Its last step for the batch with the late row: that hour and day summed again and kept (the
  // local alert queue's polls are Queries too, but not that step).
  const kept = await eventually(async () =>
    consumerCalls.calls.some((call) => call.operation === 'Query' && !onLocalAlertQueue(call)) ? true : undefined,
  );
  expect(kept).toBe(true);
  // The local alert queue stands in for SQS (the consumer Lambda's queue is an event source), so its
  // calls are not the consumer function's.
  const actions = sent(consumerCalls.calls.filter((call) => !onLocalAlertQueue(call)));
  expect([...actions].filter((action) => !granted(CONSUMER_TABLE_CALLS).has(action))).toEqual([]);
  expect(actions).toContain('usageStats:UpdateItem');
  expect(actions).toContain('usageStats:Query');
});

test('the declarations give the proxy no delete, batch write or update on the usage history, and the consumer writes only rollups, alerts and budget spend', () => {
  const proxyOn = (table: string) =>
    new Set(PROXY_TABLE_CALLS.filter((c) => c.table === table).flatMap((c) => c.actions));
  for (const forbidden of ['DeleteItem', 'BatchWriteItem', 'UpdateItem'])
    expect(proxyOn('usageLogs').has(forbidden as DynamoAction)).toBe(false);
  // On the rollups, the proxy reads, and writes only the summaries' own attributes, never a count.
  expect(tableGrants(PROXY_TABLE_CALLS).filter((g) => g.table === 'usageStats')).toEqual([
    { table: 'usageStats', actions: ['Query'] },
    { table: 'usageStats', actions: ['UpdateItem'], attributes: ['account_id', 'bucket', 'stale', 'sums'] },
  ]);
  expect(new Set(CONSUMER_TABLE_CALLS.flatMap((c) => c.actions.map((action) => `${c.table}:${action}`)))).toEqual(
    new Set([
      'usageStats:Query',
      'usageStats:UpdateItem',
      'accounts:GetItem',
      'accounts:BatchGetItem',
      'accounts:PutItem',
      'accounts:UpdateItem',
    ]),
  );
  // On the accounts table, only the alert store and the spend fold write (each in its own partitions).
  expect(
    CONSUMER_TABLE_CALLS.filter(
      (c) => c.table === 'accounts' && c.actions.some((a) => a === 'PutItem' || a === 'UpdateItem'),
    ).map((c) => c.code),
  ).toEqual(['DynamoAlertStore', 'WatermarkedCounters', 'DynamoSpendFold']);
});
