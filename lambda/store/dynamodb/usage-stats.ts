import { QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { bucketRanges, dayKey, effectivePeriod, hourKey, parseBucketKey, type KeyRange } from '../../stats/bucket-keys';
import { rollupFromItem, rowIncrements } from '../../stats/rollup';
import { assembleSummary, type RollupSlice } from '../../stats/summary';
import type { UsageRow } from '../usage-row';
import type { StatsSummary, UsageStats } from '../usage-stats';

/**
 * Hourly and daily rollups in the account's partition (see `stats/bucket-keys`
 * for the sort keys). One item per bucket and provider/model/requester, so a
 * period costs about (whole days + edge hours) × combinations items, whatever
 * the number of rows.
 */
export class DynamoUsageStats implements UsageStats {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Two plain updates in parallel, not a transaction: concurrent transactions on
   * the same hot bucket would fail with conflicts and cost twice the writes,
   * while plain ADDs on one item never conflict.
   */
  async add(row: UsageRow): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, number> = {};
    const additions = Object.entries(rowIncrements(row)).map(([attribute, amount], i) => {
      names[`#a${i}`] = attribute;
      values[`:a${i}`] = amount;
      return `#a${i} :a${i}`;
    });
    const at = new Date(row.ts);
    const dims = { provider: row.provider, model: row.model, requester: row.requester ?? '' };
    const results = await Promise.allSettled(
      [hourKey(at, dims), dayKey(at, dims)].map((bucket) =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { account_id: row.account_id, bucket },
            UpdateExpression: `ADD ${additions.join(', ')}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      ),
    );
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async summarize(accountId: string, from: Date, to: Date): Promise<StatsSummary> {
    const period = effectivePeriod(from, to);
    const pages = await Promise.all(bucketRanges(period.from, period.to).map((range) => this.readRange(accountId, range)));
    const slices: RollupSlice[] = pages.flat().map((item) => {
      const { provider, model, requester, day } = parseBucketKey(String(item.bucket));
      return { provider, model, requester, day, rollup: rollupFromItem(item) };
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
