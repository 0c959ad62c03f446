import { requestIdTime } from '../../http/request';
import { pages, type PageKey } from '../../store/dynamodb/paginate';
import { sortKeyCursor } from '../../store/dynamodb/sort-key-cursor';
import { mergeShards } from './merged-shards';
import { rowPartition, rowPartitions } from './row-shards';
import type { LogQuery, UsageLog, UsageRow } from '../usage-row';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { sentOnce } from '../../store/dynamodb/commands';

const MAX_PAGES_PER_QUERY = 20;

/** A cursor carries a row's `ts_id`: its time and request id. */
const cursors = sortKeyCursor(
  /^\d{4}-\d\d-\d\dT[\d:.]+Z#[\w-]+$/,
  'cursor: not a cursor this endpoint returned; pass next_cursor exactly as given.',
);

/**
 * Rows in a few partitions per account (row-shards.ts), each sorted by `ts_id` (ISO time +
 * request id), so "newest first for a period" is one reverse range query per shard, merged, and
 * the table reads naturally in the DynamoDB console (docs/deploy.md, "Reading the logs", gives the query).
 */
export class DynamoUsageLog implements UsageLog {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly retentionDays?: number,
  ) {}

  /**
   * One plain put, keyed by the row's own time and id, so a retried write leaves exactly one row.
   * The row's spend is not written here: the stream consumer folds it into the budgets' counters
   * from the row's INSERT (budgets/dynamodb/spend-fold.ts), and a retried put of the same row is a
   * MODIFY, which adds nothing. Never a BatchWriteItem: IAM can't allow its puts without its
   * deletes, and the function's role may not delete usage rows (docs/deploy.md, "Permissions").
   * One attempt, sent once: the row writer's policy is the only one that retries it
   * (docs/failure-modes.md).
   */
  async write(row: UsageRow): Promise<void> {
    const expires = this.retentionDays
      ? { expires_at: Math.floor(Date.parse(row.ts) / 1000) + this.retentionDays * 86_400 }
      : {};
    const item = { ...row, account_id: rowPartition(row.account_id, row.id), ts_id: `${row.ts}#${row.id}`, ...expires };
    await this.doc.send(sentOnce({ operation: 'PutItem', input: { TableName: this.table, Item: item } }));
  }

  /**
   * The sort key is the row's arrival time plus its id, the id starts with that time and picks
   * the shard: one row is one GetItem, in the caller's own partitions only (a second one for a row
   * written before shards existed).
   */
  async find(accountId: string, id: string): Promise<UsageRow | undefined> {
    const time = requestIdTime(id);
    if (time === undefined) return undefined;
    const tsId = `${new Date(time).toISOString()}#${id}`;
    for (const partition of [rowPartition(accountId, id), accountId]) {
      const result = await this.doc.send({
        operation: 'GetItem',
        input: { TableName: this.table, Key: { account_id: partition, ts_id: tsId }, ConsistentRead: true },
      });
      if (result.Item) return publicRow({ ...result.Item, account_id: accountId } as UsageRow);
    }
    return undefined;
  }

  async query(accountId: string, query: LogQuery): Promise<{ items: UsageRow[]; nextCursor: string | null }> {
    const filters: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ':account': accountId,
      ':from': query.from ?? '0000',
      ':to': `${query.to ?? '9999'}~`,
    };
    const equal = (field: string, value: unknown) => {
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      filters.push(`#${field} = :${field}`);
    };
    if (query.provider) equal('provider', query.provider);
    if (query.kind) equal('kind', query.kind);
    if (query.model) {
      names['#model'] = 'model';
      values[':model'] = query.model;
      filters.push('begins_with(#model, :model)');
    }
    if (query.requester) equal('requester', query.requester);
    if (query.token_id) equal('token_id', query.token_id);
    if (query.cached !== undefined) equal('cached', query.cached);
    Object.entries(query.tags ?? {}).forEach(([key, value], i) => {
      names['#tags'] = 'tags';
      names[`#tk${i}`] = key;
      values[`:tv${i}`] = value;
      filters.push(`#tags.#tk${i} = :tv${i}`);
    });
    if (query.status) {
      names['#status'] = 'status_code';
      values[':errorFrom'] = 400;
      filters.push(query.status === 'error' ? '#status >= :errorFrom' : '#status < :errorFrom');
    }

    const startTsId = query.cursor ? cursors.decode(query.cursor) : undefined;
    // DynamoDB applies Limit before the filter, so each shard keeps reading until the page is full.
    const shardPages = (partition: string) =>
      pages(
        (start: PageKey | undefined) =>
          this.doc.send({
            operation: 'Query',
            input: {
              TableName: this.table,
              KeyConditionExpression: 'account_id = :account AND ts_id BETWEEN :from AND :to',
              FilterExpression: filters.length ? filters.join(' AND ') : undefined,
              ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
              ExpressionAttributeValues: { ...values, ':account': partition },
              ScanIndexForward: false,
              Limit: filters.length ? Math.max(query.limit * 4, 100) : query.limit,
              ExclusiveStartKey: start,
            },
          }),
        startTsId ? { account_id: partition, ts_id: startTsId } : undefined,
      );
    const merged = await mergeShards(
      rowPartitions(accountId).map(shardPages),
      query.limit,
      MAX_PAGES_PER_QUERY,
      startTsId,
    );
    return {
      items: merged.items.map((item) => publicRow(item as unknown as UsageRow)),
      nextCursor: merged.resumeAt ? cursors.encode(merged.resumeAt) : null,
    };
  }
}

/** Storage-only attributes stay out of API answers. */
function publicRow(item: UsageRow): UsageRow {
  const {
    ts_id: _tsId,
    expires_at: _expires,
    account_id: _account,
    ...row
  } = item as UsageRow & { ts_id?: string; expires_at?: number };
  return row as UsageRow;
}
