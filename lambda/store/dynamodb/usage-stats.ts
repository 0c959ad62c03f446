import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dayKey, effectivePeriod, hourKey, parseBucketKey, summaryRanges, type KeyRange } from '../../stats/bucket-keys';
import { rollupFromItem, rowIncrements } from '../../stats/rollup';
import { assembleSummary, type RollupSlice } from '../../stats/summary';
import type { UsageRow } from '../usage-row';
import type { StatsSummary, UsageStats } from '../usage-stats';
import { MergedAdds } from './merged-adds';
import type { DocumentClient } from './wire/document-client';

/**
 * Hourly and daily rollups in the account's partition (see `stats/bucket-keys`
 * for the sort keys). One item per bucket and provider/model/requester/token,
 * so a period costs about (whole days + edge hours) × combinations items
 * (hours × combinations up to two days), whatever the number of rows.
 */
export class DynamoUsageStats implements UsageStats {
  private readonly adds: MergedAdds;

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {
    this.adds = new MergedAdds(doc, table);
  }

  /**
   * Adds the row to its hour and day buckets with plain ADDs (not a
   * transaction: concurrent transactions on one hot bucket would conflict).
   * Rows finishing together are merged into one ADD per bucket (`MergedAdds`).
   * Resolves once the row's increments are stored.
   */
  add(row: UsageRow): Promise<void> {
    const increments = rowIncrements(row);
    const at = new Date(row.ts);
    const dims = { provider: row.provider, model: row.model, requester: row.requester ?? '', token: row.token_id ?? '', kind: row.kind ?? '' };
    return Promise.all([hourKey(at, dims), dayKey(at, dims)].map((bucket) => this.adds.add({ account_id: row.account_id, bucket }, increments))).then(() => undefined);
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
