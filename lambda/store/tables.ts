/**
 * The DynamoDB tables, described once: the local server creates them from this
 * description and the CDK stack provisions them from it, so the two can't drift.
 */
export interface TableShape {
  /** Logical name; the physical name is `<prefix><logicalName>` or comes from `envVar`. */
  logicalName: string;
  envVar: string;
  partitionKey: string;
  sortKey?: { name: string; type: 'S' | 'N' };
  /** Epoch-seconds attribute that DynamoDB's TTL clean-up reads. Expiry is still checked on read. */
  ttlAttribute?: string;
  /** Holds data that can't be rebuilt (accounts, keys, usage). */
  durable: boolean;
  /** A change stream carrying each new item, read by the stream consumer (the rollup fold, the exports). */
  stream?: 'NEW_IMAGE';
}

export const TABLES = {
  /**
   * Accounts, their tokens (hashed), encrypted provider keys, one partition per account; budgets
   * and spend, one partition per token, requester and tag. Month counters of earlier versions
   * carry `expires_at`.
   */
  accounts: {
    logicalName: 'accounts',
    envVar: 'TABLE_ACCOUNTS',
    partitionKey: 'pk',
    sortKey: { name: 'sk', type: 'S' },
    ttlAttribute: 'expires_at',
    durable: true,
  },
  /** One row per proxied request, newest last within the account's partition (`ts_id` = ISO time + request id). */
  usageLogs: {
    logicalName: 'usage-logs',
    envVar: 'TABLE_USAGE_LOGS',
    partitionKey: 'account_id',
    sortKey: { name: 'ts_id', type: 'S' },
    ttlAttribute: 'expires_at',
    durable: true,
    stream: 'NEW_IMAGE',
  },
  /** Hourly and daily rollups of the usage rows, folded from the usage-logs stream with conditional ADDs. */
  usageStats: {
    logicalName: 'usage-stats',
    envVar: 'TABLE_USAGE_STATS',
    partitionKey: 'account_id',
    sortKey: { name: 'bucket', type: 'S' },
    durable: true,
  },
  /**
   * One gate item per proxy token (token-gate.ts): its request count per one-minute window beside a
   * copy of what authentication needs, so a proxied request checks and counts its token in one call.
   * A copy only: it is rebuilt from the accounts table when missing.
   */
  rateLimits: {
    logicalName: 'rate-limits',
    envVar: 'TABLE_RATE_LIMITS',
    partitionKey: 'counter_key',
    ttlAttribute: 'expires_at',
    durable: false,
  },
  /**
   * The audit log (docs/people.md): one entry per management change, one partition per account,
   * newest last (`at_id` = ISO time + random id). Only ever appended to; its stream carries each
   * entry to the S3 export.
   */
  audit: {
    logicalName: 'audit',
    envVar: 'TABLE_AUDIT',
    partitionKey: 'account_id',
    sortKey: { name: 'at_id', type: 'S' },
    durable: true,
    stream: 'NEW_IMAGE',
  },
  /** Cached responses, split into ordered parts to stay under DynamoDB's 400 KB item limit. */
  cache: {
    logicalName: 'cache',
    envVar: 'TABLE_CACHE',
    partitionKey: 'cache_key',
    sortKey: { name: 'part', type: 'N' },
    ttlAttribute: 'expires_at',
    durable: false,
  },
} as const satisfies Record<string, TableShape>;

export type TableId = keyof typeof TABLES;

export function tableNames(
  env: NodeJS.ProcessEnv,
  prefix = env.TABLE_PREFIX ?? 'ai-usage-proxy-',
): Record<TableId, string> {
  const names = {} as Record<TableId, string>;
  for (const [id, shape] of Object.entries(TABLES) as [TableId, TableShape][]) {
    names[id] = env[shape.envVar] || `${prefix}${shape.logicalName}`;
  }
  return names;
}
