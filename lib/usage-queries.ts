/**
 * The Athena named queries over the exported usage rows (docs/alerts.md, "Usage in Athena"), kept
 * here once: the stack saves them as named queries, and test/integration/store/usage-export-queries.test.ts
 * runs the same text with DuckDB over the files the export writes. Both engines read the table as
 * `usage_rows` (Athena: the Glue table in the query's database; DuckDB: a view over the files).
 * The one place their SQL differs is how a row's tag map becomes one row per tag, written in
 * `TAG_PAIRS` for each engine; every query names it as `{{tag_pairs}}`.
 */
export type SqlEngine = 'athena' | 'duckdb';

/** The Glue table's name, and the view's in DuckDB. */
export const USAGE_TABLE = 'usage_rows';
/** The Glue table over the exported audit entries (docs/people.md, "The audit log"). */
export const AUDIT_TABLE = 'audit_entries';

/** `CROSS JOIN` a row with one row per tag, as columns `tag_key` and `tag_value`. */
export const TAG_PAIRS: Record<SqlEngine, string> = {
  // Trino unnests a map into its keys and values.
  athena: 'CROSS JOIN UNNEST(u.tags) AS t (tag_key, tag_value)',
  // DuckDB unnests lists side by side in one select.
  duckdb: 'CROSS JOIN (SELECT unnest(map_keys(u.tags)) AS tag_key, unnest(map_values(u.tags)) AS tag_value) AS t',
};

export interface UsageQuery {
  /** The named query's name in Athena. */
  name: string;
  description: string;
  sql: string;
}

const MONTH = 'substr(u.dt, 1, 7)';
const SPEND =
  'SUM(u.cost_nanos) AS spend_nanos, CAST(SUM(u.cost_nanos) AS DOUBLE) / 1e9 AS spend_usd, COUNT(*) AS requests';

/** Spend per account and month, by tag, by model and by requester: every day the export holds. */
export const USAGE_QUERIES: readonly UsageQuery[] = [
  {
    name: 'spend-by-month-and-tag',
    description:
      'Spend per account, month and tag (key and value); a row counts once under each of its tags, so sum one tag key at a time',
    sql: `SELECT u.account_id, ${MONTH} AS month, t.tag_key, t.tag_value, ${SPEND}
FROM ${USAGE_TABLE} u {{tag_pairs}}
GROUP BY u.account_id, ${MONTH}, t.tag_key, t.tag_value
ORDER BY month, u.account_id, t.tag_key, spend_nanos DESC, t.tag_value`,
  },
  {
    name: 'spend-by-month-and-model',
    description: 'Spend per account, month, provider and model',
    sql: `SELECT u.account_id, ${MONTH} AS month, u.provider, u.model, ${SPEND}
FROM ${USAGE_TABLE} u
GROUP BY u.account_id, ${MONTH}, u.provider, u.model
ORDER BY month, u.account_id, spend_nanos DESC, u.provider, u.model`,
  },
  {
    name: 'spend-by-month-and-requester',
    description: 'Spend per account, month and requester (x-proxy-user); NULL for requests that named none',
    sql: `SELECT u.account_id, ${MONTH} AS month, u.requester, ${SPEND}
FROM ${USAGE_TABLE} u
GROUP BY u.account_id, ${MONTH}, u.requester
ORDER BY month, u.account_id, spend_nanos DESC, u.requester`,
  },
];

/** A query's text for one engine. */
export function querySql(query: UsageQuery, engine: SqlEngine): string {
  return query.sql.replaceAll('{{tag_pairs}}', TAG_PAIRS[engine]);
}
