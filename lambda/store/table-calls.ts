import type { TableId } from './tables';
import { accountPk } from './dynamodb/account-partition';

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
  /** The class that sends the calls (test/integration/table-grants.test.ts records what is sent at run time). */
  code: string;
  table: TableId;
  actions: readonly DynamoAction[];
  /** What the calls are for, as docs/deploy.md lists them. */
  purpose: string;
  /**
   * The partition keys its writes reach, as IAM `StringLike` patterns: the role's writes to the
   * table are then granted only on these (`dynamodb:LeadingKeys`). Its reads are not limited.
   */
  writesTo?: readonly string[];
  /**
   * The only attributes its writes may name, keys included, as IAM `dynamodb:Attributes`: the role's
   * writes to the table are then granted only on these. Its reads are not limited.
   */
  writesAttributes?: readonly string[];
}

/** The actions that change items: the ones a `writesTo` limits. */
const WRITE_ACTIONS: ReadonlySet<DynamoAction> = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

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
    purpose: 'token and budget reads, batched within a tick',
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
    actions: ['PutItem', 'DeleteItem', 'Query', 'UpdateItem'],
    purpose: "stored provider keys: save, delete, list, read a provider's pool; a key's cool-down or failure",
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
  { code: 'PeriodSummaries', table: 'usageStats', actions: ['Query'], purpose: 'the stats API reads the rollups' },
  {
    code: 'PeriodSummaries',
    table: 'usageStats',
    actions: ['UpdateItem'],
    purpose: "a past hour's or day's summary, kept the first time the stats API reads it",
    // Its own attributes only: the rollups' counts stay the stream consumer's alone.
    writesAttributes: ['account_id', 'bucket', 'sums', 'stale'],
  },
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
    code: 'DynamoGroupRoles',
    table: 'accounts',
    actions: ['GetItem', 'PutItem', 'DeleteItem', 'Query'],
    purpose: "sign-in's group roles: set and remove (in one transaction each), list, find a person's",
  },
  {
    code: 'DynamoAuditLog',
    table: 'audit',
    // No UpdateItem, DeleteItem or BatchWriteItem: the role can add entries, never change or remove one.
    actions: ['PutItem', 'Query'],
    purpose: 'the audit log: append an entry for each management change; list them',
  },
  {
    code: 'CacheTable',
    table: 'cache',
    actions: ['PutItem', 'Query', 'BatchWriteItem'],
    purpose: 'cached answers: write parts, read them, delete the parts of a replaced entry',
  },
];

/** The partitions of budget subjects, each with its spend: a token's, a requester label's, a tag's. */
const SUBJECT_PARTITIONS = ['T', 'R', 'G'].map((kind) => `${accountPk('*')}#${kind}#*`);

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
    // Claims and history live in each account's `ACCOUNT#<id>#ALERTS` partition (alerts/dynamodb/alert-store.ts).
    writesTo: [`${accountPk('*')}#ALERTS`],
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
    // A subject's item lives in its own partition, `ACCOUNT#<id>#T#…`, `#R#…` or `#G#…` (budgets/dynamodb/budget-store.ts).
    writesTo: SUBJECT_PARTITIONS,
  },
  {
    code: 'DynamoSpendFold',
    table: 'accounts',
    actions: ['UpdateItem'],
    purpose: "the spend months, days and shard watermarks no row adds to any more, removed from a subject's item",
    writesTo: SUBJECT_PARTITIONS,
  },
  {
    code: 'CappedSets',
    table: 'usageStats',
    actions: ['UpdateItem'],
    purpose: 'the tag keys and values, requester labels and models the stats keep per day, each set capped',
  },
  {
    code: 'PeriodSummaries',
    table: 'usageStats',
    actions: ['Query', 'UpdateItem'],
    purpose:
      "an hour's or day's summary kept as it seals, from its rollup items; marked stale when a late row is counted in it",
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

/** One statement of a role's table grants: actions on a table, writes limited to some partitions or attributes when declared. */
export interface TableGrant {
  table: TableId;
  actions: DynamoAction[];
  /** `dynamodb:LeadingKeys` patterns (`ForAllValues:StringLike`); absent: every partition. */
  leadingKeys?: string[];
  /** `dynamodb:Attributes` (`ForAllValues:StringEquals`); absent: every attribute. */
  attributes?: string[];
}

/** What every one of the calls declares (`undefined` when one does not), merged. */
function declaredByAll(calls: readonly TableCalls[], field: 'writesTo' | 'writesAttributes'): string[] | undefined {
  if (calls.some((c) => !c[field])) return undefined;
  return [...new Set(calls.flatMap((c) => c[field] ?? []))].sort();
}

/**
 * The statements a role needs for these calls: per table, its actions, except that when every call
 * writing a table declares `writesTo` (or `writesAttributes`), the writes get a statement of their
 * own limited to those partitions (or attributes); the reads stay on the whole table.
 */
export function tableGrants(calls: readonly TableCalls[]): TableGrant[] {
  return [...actionsByTable(calls)].flatMap(([table, actions]): TableGrant[] => {
    const writers = calls.filter((c) => c.table === table && c.actions.some((a) => WRITE_ACTIONS.has(a)));
    const leadingKeys = declaredByAll(writers, 'writesTo');
    const attributes = declaredByAll(writers, 'writesAttributes');
    if (writers.length === 0 || (!leadingKeys && !attributes)) return [{ table, actions }];
    const reads = actions.filter((a) => !WRITE_ACTIONS.has(a));
    const writes = actions.filter((a) => WRITE_ACTIONS.has(a));
    return [
      ...(reads.length ? [{ table, actions: reads }] : []),
      { table, actions: writes, ...(leadingKeys ? { leadingKeys } : {}), ...(attributes ? { attributes } : {}) },
    ];
  });
}
