import {
  effectivePeriod,
  parseBucketKey,
  parseTagBucketKey,
  summaryRanges,
  type KeyRange,
} from '../rollups/bucket-keys';
import { deltaAfter, foldRows, sortableSequence, type BucketDelta, type StreamedRow } from '../rollups/fold';
import { rollupFromItem } from '../rollups/rollup';
import { assembleSummary, type RollupSlice, type TagSlice } from '../rollups/summary';
import type { FoldOutcome, StatsSummary, UsageStats } from '../usage-stats';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { allItems } from '../../store/dynamodb/paginate';
import { eachInFlight } from '../../in-flight';
import { conditionFailedItem } from '../../store/dynamodb/store-errors';
import { CappedSets } from './capped-sets';
import { countedLabels } from './label-caps';
import { countedTags } from './tag-values';

/** Rollup writes in flight at once per batch. */
const WRITES_IN_FLIGHT = 8;

/** Rounds of "someone else moved the watermark first" before a bucket's write is given up (and redelivered). */
const MAX_WATERMARK_ROUNDS = 5;

/** The attribute of a rollup item holding the last stream position of `lineage` counted in it. */
export const watermarkAttribute = (lineage: string) => `seq#${lineage}`;

/**
 * Hourly and daily rollups in the account's partition (see `usage/rollups/bucket-keys`
 * for the sort keys). One item per bucket and provider/model/requester/token,
 * so a period costs about (whole days + edge hours) × combinations items
 * (hours × combinations up to two days), whatever the number of rows.
 *
 * Idempotence: each item keeps, per stream shard, the sequence number of the
 * last row it counted (`seq#<shard>`). A batch's ADD to an item is conditioned
 * on that watermark being below the first row it carries, and moves it to the
 * last. A shard delivers its rows in order, so a row at or below the watermark
 * is already counted: when the condition fails, the item's old image (returned
 * with the failure) names the watermark, and only the rows after it are added,
 * conditioned on the watermark being exactly that. A redelivered, split or
 * overlapping batch, or a second consumer, thus never counts a row twice, and
 * a lost answer can be resent safely. What this needs of a consumer is what
 * Lambda does per shard: batches in order, one at a time, and no moving past
 * a batch whose rows were reported as failed until they are counted.
 */
export class DynamoUsageStats implements UsageStats {
  private readonly cappedSets: CappedSets;

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {
    this.cappedSets = new CappedSets(doc, table);
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
    const watermark = watermarkAttribute(delta.lineage);
    let pending: BucketDelta | undefined = delta;
    let stored: string | undefined;
    for (let round = 0; round < MAX_WATERMARK_ROUNDS; round++) {
      if (!pending) return;
      const names: Record<string, string> = { '#w': watermark };
      const values: Record<string, unknown> = {
        ':last': sortableSequence(pending.rows[pending.rows.length - 1].sequence),
        ':guard': stored ?? sortableSequence(pending.rows[0].sequence),
      };
      const additions = Object.entries(pending.increments).map(([attribute, amount], i) => {
        names[`#a${i}`] = attribute;
        values[`:a${i}`] = amount;
        return `#a${i} :a${i}`;
      });
      try {
        await this.doc.send({
          operation: 'UpdateItem',
          input: {
            TableName: this.table,
            Key: { account_id: delta.accountId, bucket: delta.bucket },
            UpdateExpression: `ADD ${additions.join(', ')} SET #w = :last`,
            // First try: nothing of this shard at or after the batch's first row is counted yet.
            // Later tries: the watermark is still the one just read, so the rows after it are new.
            ConditionExpression: stored === undefined ? 'attribute_not_exists(#w) OR #w < :guard' : '#w = :guard',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        });
        return;
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        const current = conditionFailedItem(error)?.[watermark];
        if (typeof current !== 'string')
          throw new Error(`rollup ${delta.bucket}: condition failed without a watermark`);
        stored = current;
        pending = deltaAfter(delta, current);
      }
    }
    if (pending) throw new Error(`rollup ${delta.bucket}: the watermark kept moving under concurrent consumers`);
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
