import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dayKey, effectivePeriod, hourKey, parseBucketKey, summaryRanges, type KeyRange } from '../../stats/bucket-keys';
import { rollupFromItem, rowIncrements } from '../../stats/rollup';
import { assembleSummary, type RollupSlice } from '../../stats/summary';
import type { UsageRow } from '../usage-row';
import type { StatsSummary, UsageStats } from '../usage-stats';
import { sentAtMostOnce, type DocumentClient } from './wire/document-client';

/**
 * Hourly and daily rollups in the account's partition (see `stats/bucket-keys`
 * for the sort keys). One item per bucket and provider/model/requester/token,
 * so a period costs about (whole days + edge hours) × combinations items
 * (hours × combinations up to two days), whatever the number of rows.
 */
interface PendingBucket {
  accountId: string;
  bucket: string;
  increments: Record<string, number>;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

export class DynamoUsageStats implements UsageStats {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  /** Increments waiting to be written, by bucket; merged while an earlier write of the same bucket is in flight. */
  private readonly pending = new Map<string, PendingBucket>();
  private readonly writing = new Set<string>();

  /**
   * Adds the row to its hour and day buckets with plain ADDs (not a
   * transaction: concurrent transactions on one hot bucket would conflict).
   * Rows finishing together are merged into one ADD per bucket, so under load
   * a bucket costs one write per flush instead of one per row. Resolves once
   * the row's increments are stored.
   */
  add(row: UsageRow): Promise<void> {
    const increments = rowIncrements(row);
    const at = new Date(row.ts);
    const dims = { provider: row.provider, model: row.model, requester: row.requester ?? '', token: row.token_id ?? '' };
    return Promise.all([hourKey(at, dims), dayKey(at, dims)].map((bucket) => this.enqueue(row.account_id, bucket, increments))).then(() => undefined);
  }

  private enqueue(accountId: string, bucket: string, increments: Record<string, number>): Promise<void> {
    const id = `${accountId}\u0000${bucket}`;
    let entry = this.pending.get(id);
    if (!entry) {
      entry = { accountId, bucket, increments: {}, waiters: [] };
      this.pending.set(id, entry);
      if (!this.writing.has(id)) setImmediate(() => void this.write(id));
    }
    for (const [attribute, amount] of Object.entries(increments)) entry.increments[attribute] = (entry.increments[attribute] ?? 0) + amount;
    const waiting = entry;
    return new Promise((resolve, reject) => waiting.waiters.push({ resolve, reject }));
  }

  private async write(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    this.writing.add(id);
    const names: Record<string, string> = {};
    const values: Record<string, number> = {};
    const additions = Object.entries(entry.increments).map(([attribute, amount], i) => {
      names[`#a${i}`] = attribute;
      values[`:a${i}`] = amount;
      return `#a${i} :a${i}`;
    });
    try {
      await this.doc.send(
        // A resent ADD after a lost answer would count every merged row twice.
        sentAtMostOnce(
          new UpdateCommand({
            TableName: this.table,
            Key: { account_id: entry.accountId, bucket: entry.bucket },
            UpdateExpression: `ADD ${additions.join(', ')}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
      for (const waiter of entry.waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of entry.waiters) waiter.reject(error);
    } finally {
      this.writing.delete(id);
      // Increments that arrived during this write go out now, merged.
      if (this.pending.has(id)) void this.write(id);
    }
  }

  async summarize(accountId: string, from: Date, to: Date): Promise<StatsSummary> {
    const period = effectivePeriod(from, to);
    const pages = await Promise.all(summaryRanges(period.from, period.to).map((range) => this.readRange(accountId, range)));
    const slices: RollupSlice[] = pages.flat().map((item) => {
      const { granularity: _granularity, ...dims } = parseBucketKey(String(item.bucket));
      return { ...dims, rollup: rollupFromItem(item) };
    });
    return assembleSummary(period, slices);
  }

  private async readRange(accountId: string, range: KeyRange): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'account_id = :account AND #bucket BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#bucket': 'bucket' },
          ExpressionAttributeValues: { ':account': accountId, ':lower': range.lower, ':upper': range.upper },
          // The overview should show a request the moment its row is written.
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }
}
