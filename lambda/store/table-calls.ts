import type { TableId } from '../tables';

/**
 * The DynamoDB actions IAM checks for the calls the code sends. A transaction has no action of
 * its own: IAM checks each `Put`, `Update`, `Delete` or `ConditionCheck` inside it as `PutItem`,
 * `UpdateItem`, `DeleteItem` or `ConditionCheckItem`. A `BatchWriteItem` is checked as itself,
 * whether it puts or deletes.
 */
export type DynamoAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem'
  | 'ConditionCheckItem';

export interface TableCalls {
  /** The class that sends the calls (test/infra/table-calls.test.ts reads its source). */
  code: string;
  table: TableId;
  actions: readonly DynamoAction[];
  /** What the calls are for, as docs/deploy.md lists them. */
  purpose: string;
}

/**
 * Every DynamoDB call the proxy function sends, per table, in AWS (the local server's own table
 * creation and stream reads never run there). The stack grants exactly these and nothing else; a
 * test fails when the code sends an action not listed here or a listed action is never sent.
 */
export const PROXY_TABLE_CALLS: readonly TableCalls[] = [
  {
    code: 'BatchedGet',
    table: 'accounts',
    actions: ['GetItem', 'BatchGetItem'],
    purpose: 'token, provider-key and budget reads, batched within a tick',
  },
  {
    code: 'DynamoAccountStore',
    table: 'accounts',
    actions: ['PutItem', 'GetItem', 'Query', 'UpdateItem'],
    purpose: 'accounts and tokens: create, list, revoke, tags and limits',
  },
  {
    code: 'DynamoProviderKeyStore',
    table: 'accounts',
    actions: ['PutItem', 'DeleteItem', 'Query'],
    purpose: 'stored provider keys: save, delete, list',
  },
  {
    code: 'DynamoBudgetStore',
    table: 'accounts',
    actions: ['UpdateItem', 'Query'],
    purpose: 'budgets: set, remove, list',
  },
  {
    code: 'DynamoAlertStore',
    table: 'accounts',
    actions: ['PutItem', 'GetItem', 'DeleteItem', 'Query'],
    purpose: "an account's alert webhook: set, show, remove; its recent alerts",
  },
  {
    code: 'DynamoUsageLog',
    table: 'usageLogs',
    actions: ['PutItem', 'GetItem', 'Query'],
    purpose: 'usage rows; one row; the logs API',
  },
  { code: 'DynamoUsageStats', table: 'usageStats', actions: ['Query'], purpose: 'the stats API reads the rollups' },
  {
    code: 'DynamoTokenGate',
    table: 'rateLimits',
    actions: ['UpdateItem'],
    purpose: "each proxied request's token check and rate count",
  },
  {
    code: 'DynamoAccountStore',
    table: 'rateLimits',
    actions: ['PutItem', 'UpdateItem'],
    purpose: "a new token's gate item; revocation, tags and limits",
  },
  {
    code: 'BatchedGet',
    table: 'rateLimits',
    actions: ['GetItem', 'BatchGetItem'],
    purpose: "tokens' last use, for the token list",
  },
  {
    code: 'DynamoBudgetStore',
    table: 'rateLimits',
    actions: ['UpdateItem'],
    purpose: "a token's budget flag on its gate item",
  },
  {
    code: 'CacheTable',
    table: 'cache',
    actions: ['PutItem', 'Query', 'BatchWriteItem'],
    purpose: 'cached answers: write parts, read them, delete the parts of a replaced entry',
  },
];

/**
 * Every DynamoDB call the stream consumer sends: it folds rows into the rollups and the budgets'
 * spend, and reads budgets and claims and records budget alerts (docs/alerts.md).
 */
export const CONSUMER_TABLE_CALLS: readonly TableCalls[] = [
  {
    code: 'BatchedGet',
    table: 'accounts',
    actions: ['GetItem', 'BatchGetItem'],
    purpose: 'the budgets of the rows just written, with their spend',
  },
  {
    code: 'DynamoAlertStore',
    table: 'accounts',
    actions: ['PutItem', 'UpdateItem', 'GetItem'],
    purpose: "an alert's claim with its history entry (in one transaction), its deliveries, the account's webhook",
  },
  {
    code: 'WatermarkedCounters',
    table: 'usageStats',
    actions: ['UpdateItem'],
    purpose: 'rollup items, conditional ADD per shard watermark',
  },
  {
    code: 'WatermarkedCounters',
    table: 'accounts',
    actions: ['UpdateItem'],
    purpose: "each subject's spend (token, requester, tag), conditional ADD per shard watermark",
  },
  {
    code: 'DynamoSpendFold',
    table: 'accounts',
    actions: ['UpdateItem'],
    purpose: "the spend months, days and shard watermarks no row adds to any more, removed from a subject's item",
  },
  {
    code: 'TagValueCaps',
    table: 'usageStats',
    actions: ['UpdateItem'],
    purpose: 'the tag keys and values the stats keep per day, each set capped',
  },
];

/** The actions per table, sorted, as the stack grants them. */
export function actionsByTable(calls: readonly TableCalls[]): Map<TableId, DynamoAction[]> {
  const byTable = new Map<TableId, Set<DynamoAction>>();
  for (const { table, actions } of calls) {
    const set = byTable.get(table) ?? new Set<DynamoAction>();
    for (const action of actions) set.add(action);
    byTable.set(table, set);
  }
  return new Map([...byTable].map(([table, set]) => [table, [...set].sort()]));
}
