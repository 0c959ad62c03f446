import type { AuditEntry } from '../audit/ports';
import type { UsageRow } from '../usage/usage-row';

/** A column's type as Glue (Hive) names it; the local query test maps each to DuckDB's. */
export type ColumnType =
  'string' | 'bigint' | 'int' | 'double' | 'boolean' | 'map<string,string>' | 'map<string,bigint>';

/**
 * The columns of an exported usage row, in order: the fields of the row (docs/usage-and-pricing.md,
 * "The usage row") and nothing else of the stored item. The export writes exactly these, and the
 * Glue table declares exactly these, so a query's columns are the row's.
 */
export const USAGE_COLUMNS = [
  { name: 'account_id', type: 'string' },
  { name: 'id', type: 'string' },
  { name: 'ts', type: 'string' },
  { name: 'provider', type: 'string' },
  { name: 'kind', type: 'string' },
  { name: 'model', type: 'string' },
  { name: 'input_tokens', type: 'bigint' },
  { name: 'output_tokens', type: 'bigint' },
  { name: 'cache_read_tokens', type: 'bigint' },
  { name: 'cache_write_tokens', type: 'bigint' },
  { name: 'server_tool_use', type: 'map<string,bigint>' },
  { name: 'cost_nanos', type: 'bigint' },
  { name: 'cost_usd', type: 'double' },
  { name: 'priced', type: 'boolean' },
  { name: 'price_source', type: 'string' },
  { name: 'usage_estimated', type: 'boolean' },
  { name: 'latency_ms', type: 'int' },
  { name: 'requester', type: 'string' },
  { name: 'tags', type: 'map<string,string>' },
  { name: 'status_code', type: 'int' },
  { name: 'cached', type: 'boolean' },
  { name: 'saved_nanos', type: 'bigint' },
  { name: 'saved_usd', type: 'double' },
  { name: 'stream', type: 'boolean' },
  { name: 'error', type: 'string' },
  { name: 'mode', type: 'string' },
  { name: 'token_id', type: 'string' },
  // Added after the others, so an existing table's columns keep their places.
  { name: 'priced_as', type: 'string' },
  { name: 'key_label', type: 'string' },
  { name: 'key_hint', type: 'string' },
] as const satisfies readonly { name: keyof UsageRow; type: ColumnType }[];

/** The partition column: the UTC day of the row's `ts`, as `dt=YYYY-MM-DD/` in the object's key. */
export const DAY_PARTITION = 'dt';

/** The row as one exported record: its columns only, absent ones left out (they read as NULL). */
export function exportedRecord(row: UsageRow): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const { name } of USAGE_COLUMNS) if (row[name] !== undefined) record[name] = row[name];
  return record;
}

/**
 * The columns of an exported audit entry (docs/people.md, "The audit log"), as `GET /api/audit` names
 * them, with the account. `before` and `after` are the settings' JSON text: a setting has any shape.
 */
export const AUDIT_COLUMNS = [
  { name: 'account_id', type: 'string' },
  { name: 'id', type: 'string' },
  { name: 'at', type: 'string' },
  { name: 'actor', type: 'string' },
  { name: 'actor_name', type: 'string' },
  { name: 'address', type: 'string' },
  { name: 'action', type: 'string' },
  { name: 'target', type: 'string' },
  { name: 'before', type: 'string' },
  { name: 'after', type: 'string' },
] as const satisfies readonly { name: string; type: ColumnType }[];

/** An audit entry as one exported record: its columns, absent ones left out (they read as NULL). */
export function exportedAuditRecord(entry: AuditEntry): Record<string, unknown> {
  const json = (value: AuditEntry['before']) => (value === undefined ? undefined : JSON.stringify(value));
  const record: Record<string, string | undefined> = {
    account_id: entry.accountId,
    id: entry.id,
    at: entry.at,
    actor: entry.actor,
    actor_name: entry.actorName,
    address: entry.address,
    action: entry.action,
    target: entry.target,
    before: json(entry.before),
    after: json(entry.after),
  };
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
