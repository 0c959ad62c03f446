import {
  effectivePeriod,
  parseBucketKey,
  parseTagBucketKey,
  summaryRanges,
  type KeyRange,
} from '../rollups/bucket-keys';
import { bucketIncrements, foldRows, type BucketDelta, type StreamedRow } from '../rollups/fold';
import { rollupFromItem } from '../rollups/rollup';
import { assembleSummary, type RollupSlice, type TagSlice } from '../rollups/summary';
import type { FoldOutcome, StatsSummary, UsageStats } from '../usage-stats';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { allItems } from '../../store/dynamodb/paginate';
import { eachInFlight } from '../../in-flight';
import { WatermarkedCounters } from '../../store/dynamodb/watermarked-counters';
import { CappedSets } from './capped-sets';
import { countedLabels } from './label-caps';
import { countedTags } from './tag-values';

/** Rollup writes in flight at once per batch. */
const WRITES_IN_FLIGHT = 8;

/** The attribute of a rollup item holding the last stream position of `lineage` counted in it. */
export const watermarkAttribute = (lineage: string) => `seq#${lineage}`;

/**
 * Hourly and daily rollups in the account's partition (see `usage/rollups/bucket-keys`
 * for the sort keys). One item per bucket and provider/model/requester/token,
 * so a period costs about (whole days + edge hours) × combinations items
 * (hours × combinations up to two days), whatever the number of rows.
 *
 * Idempotence: each item keeps, per stream shard, the sequence number of the last row it counted
 * (`seq#<shard>`), and a batch's ADD is conditioned on it (store/dynamodb/watermarked-counters.ts):
 * a redelivered, split or overlapping batch, or a second consumer, never counts a row twice.
 */
export class DynamoUsageStats implements UsageStats {
  private readonly cappedSets: CappedSets;
  private readonly counters: WatermarkedCounters;

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {
    this.cappedSets = new CappedSets(doc, table);
    this.counters = new WatermarkedCounters(doc);
  }

  async fold(rows: StreamedRow[]): Promise<FoldOutcome> {
    const failed = new Set<StreamedRow>();
    let counted: StreamedRow[];
    try {
      counted = await this.countedValues(rows);
    } catch (error) {
      this.onFailure?.(undefined, error);
      return { failed: rows };
    }
    const deltas = foldRows(counted);
    // An account's rollup items share one partition: a few writes at a time stay far below its
    // write limit, and a large batch does not flood the store.
    await eachInFlight(deltas, WRITES_IN_FLIGHT, (delta) =>
      this.apply(delta).catch((error: unknown) => {
        this.onFailure?.(delta, error);
        for (const row of delta.rows) failed.add(row);
      }),
    );
    return { failed: [...failed] };
  }

  async countedValues(rows: StreamedRow[]): Promise<StreamedRow[]> {
    return countedLabels(this.cappedSets, await countedTags(this.cappedSets, rows));
  }

  /** Told about each bucket write given up on (its rows are reported as failed); no delta when the capped sets could not be read. */
  onFailure?: (delta: BucketDelta | undefined, error: unknown) => void;

  private async apply(delta: BucketDelta): Promise<void> {
    await this.counters.add({
      table: this.table,
      key: { account_id: delta.accountId, bucket: delta.bucket },
      watermark: watermarkAttribute(delta.lineage),
      rows: delta.rows,
      increments: (rows) => (rows === delta.rows ? delta.increments : bucketIncrements(delta, rows)),
    });
  }

  async summarize(accountId: string, from: Date, to: Date): Promise<StatsSummary> {
    const period = effectivePeriod(from, to);
    const pages = await Promise.all(
      summaryRanges(period.from, period.to).map((range) => this.readRange(accountId, range)),
    );
    const slices: RollupSlice[] = [];
    const tagSlices: TagSlice[] = [];
    for (const item of pages.flat()) {
      const bucket = String(item.bucket);
      // Tag rollups share the key ranges (bucket-keys.ts): the same queries bring them.
      const tag = parseTagBucketKey(bucket);
      if (tag) {
        tagSlices.push({ ...tag, rollup: rollupFromItem(item) });
        continue;
      }
      const { granularity: _granularity, ...dims } = parseBucketKey(bucket);
      slices.push({ ...dims, rollup: rollupFromItem(item) });
    }
    return assembleSummary(period, slices, tagSlices);
  }

  private async readRange(accountId: string, range: KeyRange): Promise<Record<string, unknown>[]> {
    return allItems((start) =>
      this.doc.send({
        operation: 'Query',
        input: {
          TableName: this.table,
          KeyConditionExpression: 'account_id = :account AND #bucket BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#bucket': 'bucket' },
          ExpressionAttributeValues: { ':account': accountId, ':lower': range.lower, ':upper': range.upper },
          // The overview should show a request the moment its row is written.
          ConsistentRead: true,
          ExclusiveStartKey: start,
        },
      }),
    );
  }
}
