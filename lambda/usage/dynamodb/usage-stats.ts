import { effectivePeriod, periodUnits } from '../rollups/bucket-keys';
import { bucketIncrements, bucketsOf, foldRows, type BucketDelta, type StreamedRow } from '../rollups/fold';
import { assembleSummary } from '../rollups/summary';
import type { FoldOutcome, StatsSummary, UsageStats } from '../usage-stats';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { eachInFlight } from '../../base/in-flight';
import { WatermarkedCounters } from '../../store/dynamodb/watermarked-counters';
import { CappedSets } from './capped-sets';
import { DAILY_CAPS, type DailyCaps } from './daily-caps';
import { countedLabels } from './label-caps';
import { PeriodSummaries } from './period-summaries';
import { countedTags } from './tag-values';

/** Rollup writes in flight at once per batch. */
const WRITES_IN_FLIGHT = 8;

/** The attribute of a rollup item holding the last stream position of `lineage` counted in it. */
export const watermarkAttribute = (lineage: string) => `seq#${lineage}`;

/**
 * Hourly and daily rollups in the account's partition (see `usage/rollups/bucket-keys`
 * for the sort keys). One item per bucket and provider/model/requester/token,
 * and, for each hour and day past, one summary of them (period-summaries.ts): a period reads one
 * item per past hour or day it holds, and the rollup items of the hour under way.
 *
 * Idempotence: each item keeps, per stream shard, the sequence number of the last row it counted
 * (`seq#<shard>`), and a batch's ADD is conditioned on it (store/dynamodb/watermarked-counters.ts):
 * a redelivered, split or overlapping batch, or a second consumer, never counts a row twice.
 */
export class DynamoUsageStats implements UsageStats {
  /** The per-day caps its fold and `countedValues` apply (daily-caps.ts). */
  readonly caps: DailyCaps;
  private readonly cappedSets: CappedSets;
  private readonly counters: WatermarkedCounters;
  private readonly summaries: PeriodSummaries;

  constructor(
    doc: DocumentClient,
    private readonly table: string,
    now: () => number = Date.now,
    options: {
      /**
       * How many distinct names a day keeps; the product's own unless given. Tests fold past
       * smaller ones with fewer rows; every caller in the runtime leaves it out.
       */
      caps?: DailyCaps;
    } = {},
  ) {
    this.caps = options.caps ?? DAILY_CAPS;
    this.cappedSets = new CappedSets(doc, table);
    this.counters = new WatermarkedCounters(doc);
    this.summaries = new PeriodSummaries(doc, table, now, (error) => this.onSumsNotKept?.(error));
  }

  /** Told when a read or a fold could not keep the sums of a past hour or day (the read answered anyway). */
  onSumsNotKept?: (error: unknown) => void;

  async fold(rows: StreamedRow[]): Promise<FoldOutcome> {
    const failed = new Set<StreamedRow>();
    const firstCounted = new Set<StreamedRow>();
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
      this.apply(delta, (counted) => {
        for (const streamed of counted) if (bucketsOf(streamed.row)[0] === delta.bucket) firstCounted.add(streamed);
      }).catch((error: unknown) => {
        this.onFailure?.(delta, error);
        for (const row of delta.rows) failed.add(row);
      }),
    );
    await eachInFlight([...groupByAccount(deltas)], WRITES_IN_FLIGHT, async ([accountId, accountDeltas]) => {
      const buckets = accountDeltas.map((delta) => delta.bucket);
      try {
        // After the counts, never before: a summary built in between would miss them (period-summaries.ts).
        await this.summaries.markStale(accountId, buckets);
      } catch (error) {
        this.onFailure?.(accountDeltas[0], error);
        for (const delta of accountDeltas) for (const row of delta.rows) failed.add(row);
        return;
      }
      this.summaries.noteCounted(accountId, buckets);
    });
    // The first read of a past period then finds its hours and days summed. Not keeping them costs
    // that read time, never a row.
    await this.summaries.keepSealed();
    return { failed: [...failed], counted: [...firstCounted] };
  }

  /** Rollup items changed outside a fold (a rebuild): the summaries of their past hours and days are stale. */
  async markChanged(accountId: string, buckets: readonly string[]): Promise<void> {
    await this.summaries.markStale(accountId, buckets);
  }

  async countedValues(rows: StreamedRow[]): Promise<StreamedRow[]> {
    return countedLabels(this.cappedSets, await countedTags(this.cappedSets, rows, this.caps), this.caps);
  }

  /** Told about each bucket write given up on (its rows are reported as failed); no delta when the capped sets could not be read. */
  onFailure?: (delta: BucketDelta | undefined, error: unknown) => void;

  private async apply(delta: BucketDelta, onCounted: (rows: readonly StreamedRow[]) => void): Promise<void> {
    await this.counters.add({
      onCounted,
      table: this.table,
      key: { account_id: delta.accountId, bucket: delta.bucket },
      watermark: watermarkAttribute(delta.lineage),
      rows: delta.rows,
      increments: (rows) => (rows === delta.rows ? delta.increments : bucketIncrements(delta, rows)),
    });
  }

  async summarize(accountId: string, from: Date, to: Date): Promise<StatsSummary> {
    const period = effectivePeriod(from, to);
    return assembleSummary(period, await this.summaries.sumsOf(accountId, periodUnits(period.from, period.to)));
  }
}

function groupByAccount(deltas: readonly BucketDelta[]): Map<string, BucketDelta[]> {
  const groups = new Map<string, BucketDelta[]>();
  for (const delta of deltas) {
    const group = groups.get(delta.accountId);
    if (group) group.push(delta);
    else groups.set(delta.accountId, [delta]);
  }
  return groups;
}
