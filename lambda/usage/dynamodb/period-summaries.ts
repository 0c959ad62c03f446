import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { eachInFlight } from '../../base/in-flight';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { allItems } from '../../store/dynamodb/paginate';
import {
  parseBucketKey,
  parseTagBucketKey,
  unitOfBucket,
  type Granularity,
  type KeyRange,
  type PeriodUnit,
} from '../rollups/bucket-keys';
import { DimensionSums, type PackedSums } from '../rollups/dimension-sums';
import { rollupFromItem } from '../rollups/rollup';
import type { TimedSums } from '../rollups/summary';

/**
 * An hour or day is sealed this long after it ends: its summary may then be kept. Rows reach the
 * rollups seconds after their time; one that comes later (a replayed spool, a retried batch) marks
 * the summary stale. The margin covers the clocks of the instance that reads and the one that folds.
 */
export const SEAL_MARGIN_MS = 5 * 60_000;

/** Summaries built at once when a period's first read finds them missing. */
const BUILDS_IN_FLIGHT = 4;

/** Accounts whose counted hours and days an instance notes (`keepSealed`); past that it forgets them all. */
const MAX_ACCOUNTS_NOTED = 10_000;

/**
 * A stored summary larger than this is not kept (DynamoDB's item limit is 400 KB): that hour or day
 * is then read from its rollup items each time, as an unsealed one is.
 */
export const MAX_STORED_BYTES = 300 * 1024;

/** `SUM#H#2026-11-21T13`, `SUM#D#2026-11-21`: beside the rollup items, outside their key ranges. */
export const summaryKey = (granularity: Granularity, stamp: string) => `SUM#${granularity}#${stamp}`;

const unitKey = (unit: PeriodUnit) => summaryKey(unit.granularity, unit.hour ?? unit.day);

const isSealed = (unit: PeriodUnit, now: number) => unit.endMs + SEAL_MARGIN_MS <= now;

/**
 * The sums of a past hour or day, kept as one item once the hour or day is sealed, so a period's
 * summary reads one item per hour or day instead of every rollup item in it (up to the day's cap
 * of rollup items per hour or day, label-caps.ts). An item is either a summary (`sums`, gzipped
 * `DimensionSums`) or a stale mark (`stale`, a fresh id each time), which a fold of a late row
 * leaves and the next read replaces.
 *
 * The fold keeps the sums of the hours and days it counted rows in once they seal (`keepSealed`),
 * and a read keeps any still missing. A summary is built from the rollup items, and stored only if
 * its item is still what the builder saw before reading them. A fold marks after its rollup writes,
 * so a summary stored is never missing a row whose fold finished: either the mark came before the
 * builder saw the item (and the items read include the row), or after (and the store is refused).
 */
export class PeriodSummaries {
  /** Per account, the hours and days this instance counted rows in and has not yet kept the sums of (`keepSealed`). */
  private readonly counted = new Map<string, Map<string, PeriodUnit>>();

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly now: () => number = Date.now,
    /** Told when sums could not be kept (refused, throttled): the read answers anyway, and the next one sums again. */
    private readonly notKept: (error: unknown) => void = () => {},
  ) {}

  /** The sums of each unit: a sealed one from its summary, stored the first time; the others from their rollup items. */
  async sumsOf(accountId: string, units: readonly PeriodUnit[]): Promise<TimedSums[]> {
    const now = this.now();
    // No row has a time past now (the instances' clocks aside): later units are empty.
    const present = units.filter((unit) => unit.startMs <= now + SEAL_MARGIN_MS);
    const sealed = present.filter((unit) => isSealed(unit, now));
    const open = present.filter((unit) => !isSealed(unit, now));
    const [sealedSums, openSums] = await Promise.all([
      this.sealedSums(accountId, sealed),
      Promise.all(open.map(async (unit) => (await this.sumItems(accountId, unit.items)).toPacked())),
    ]);
    const sums = new Map<PeriodUnit, PackedSums>([
      ...sealedSums,
      ...open.map((unit, i) => [unit, openSums[i]] as const),
    ]);
    return present.map((unit) => ({ day: unit.day, ...(unit.hour ? { hour: unit.hour } : {}), sums: sums.get(unit)! }));
  }

  /** Notes the hours and days the fold just counted rows of the account in: `keepSealed` keeps their sums once sealed. */
  noteCounted(accountId: string, buckets: readonly string[]): void {
    let noted = this.counted.get(accountId);
    if (!noted) {
      if (this.counted.size >= MAX_ACCOUNTS_NOTED) this.counted.clear();
      this.counted.set(accountId, (noted = new Map<string, PeriodUnit>()));
    }
    for (const bucket of buckets) {
      const unit = unitOfBucket(bucket);
      noted.set(unitKey(unit), unit);
    }
  }

  /**
   * Keeps the sums of the noted hours and days that have sealed, of every account. The fold calls
   * it after each batch, whoever's rows it holds, so the first read of a past hour or day finds its
   * sums kept, an account gone quiet included. Only while no rows at all arrive (or after this
   * instance ends) is that left to the first read.
   */
  async keepSealed(): Promise<void> {
    const now = this.now();
    await eachInFlight([...this.counted], BUILDS_IN_FLIGHT, async ([accountId, noted]) => {
      const sealed = [...noted.values()].filter((unit) => isSealed(unit, now));
      if (sealed.length === 0) return;
      try {
        await this.keepMissing(accountId, sealed);
      } catch (error) {
        // Still noted: the next batch tries again.
        this.notKept(error);
        return;
      }
      for (const unit of sealed) noted.delete(unitKey(unit));
      if (noted.size === 0) this.counted.delete(accountId);
    });
  }

  /**
   * Marks the summaries of the hours and days the rollup items `buckets` count in stale, where
   * those have ended: a row of theirs was counted after their summary may have been built.
   */
  async markStale(accountId: string, buckets: readonly string[]): Promise<void> {
    const now = this.now();
    const keys = new Set(
      buckets
        .map(unitOfBucket)
        .filter((unit) => unit.endMs <= now)
        .map(unitKey),
    );
    await eachInFlight([...keys], BUILDS_IN_FLIGHT, (bucket) =>
      this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: { account_id: accountId, bucket },
          UpdateExpression: 'SET #stale = :stale REMOVE #sums',
          ExpressionAttributeNames: { '#stale': 'stale', '#sums': 'sums' },
          ExpressionAttributeValues: { ':stale': randomUUID() },
        },
      }),
    );
  }

  /** The sums of sealed units: kept ones unpacked, the others built (and kept). */
  private async sealedSums(accountId: string, sealed: readonly PeriodUnit[]): Promise<Map<PeriodUnit, PackedSums>> {
    const stored = await this.readStored(accountId, sealed);
    const sums = new Map<PeriodUnit, PackedSums>();
    await eachInFlight(sealed, BUILDS_IN_FLIGHT, async (unit) => {
      const item = stored.get(unitKey(unit));
      sums.set(unit, item?.sums ? unpackStored(item.sums) : await this.build(accountId, unit, item?.stale));
    });
    return sums;
  }

  /** Builds and keeps the sums of those sealed units that have none kept. */
  private async keepMissing(accountId: string, sealed: readonly PeriodUnit[]): Promise<void> {
    const stored = await this.readStored(accountId, sealed);
    const missing = sealed.filter((unit) => !stored.get(unitKey(unit))?.sums);
    await eachInFlight(missing, BUILDS_IN_FLIGHT, (unit) =>
      this.build(accountId, unit, stored.get(unitKey(unit))?.stale),
    );
  }

  /** The stored items of the sealed units, by key: one query per run of consecutive hours or days. */
  private async readStored(
    accountId: string,
    sealed: readonly PeriodUnit[],
  ): Promise<Map<string, Partial<StoredSummary>>> {
    const runs: { first: PeriodUnit; last: PeriodUnit }[] = [];
    for (const unit of sealed) {
      const run = runs.at(-1);
      if (run && run.last.granularity === unit.granularity && run.last.endMs === unit.startMs) run.last = unit;
      else runs.push({ first: unit, last: unit });
    }
    const pages = await Promise.all(
      runs.map(({ first, last }) => this.query(accountId, { lower: unitKey(first), upper: unitKey(last) })),
    );
    return new Map(pages.flat().map((item) => [String(item.bucket), item as Partial<StoredSummary>]));
  }

  /** A sealed unit's sums from its rollup items, stored if nothing changed the summary's item meanwhile. */
  private async build(accountId: string, unit: PeriodUnit, seenStale: string | undefined): Promise<PackedSums> {
    const sums = (await this.sumItems(accountId, unit.items)).toPacked();
    const packed = gzipSync(JSON.stringify(sums));
    if (packed.byteLength > MAX_STORED_BYTES) return sums;
    try {
      await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: { account_id: accountId, bucket: unitKey(unit) },
          UpdateExpression: 'SET #sums = :sums REMOVE #stale',
          ...(seenStale === undefined
            ? {
                ConditionExpression: 'attribute_not_exists(#bucket)',
                ExpressionAttributeNames: { '#sums': 'sums', '#stale': 'stale', '#bucket': 'bucket' },
                ExpressionAttributeValues: { ':sums': packed },
              }
            : {
                ConditionExpression: '#stale = :seen',
                ExpressionAttributeNames: { '#sums': 'sums', '#stale': 'stale' },
                ExpressionAttributeValues: { ':sums': packed, ':seen': seenStale },
              }),
        },
      });
    } catch (error) {
      // A fold marked it, or another read stored it, meanwhile: the next read uses theirs. Any other
      // failure to keep them costs only speed, never the answer.
      if ((error as Error).name !== 'ConditionalCheckFailedException') this.notKept(error);
    }
    return sums;
  }

  private async sumItems(accountId: string, range: KeyRange): Promise<DimensionSums> {
    const sums = new DimensionSums();
    for (const item of await this.query(accountId, range)) {
      const bucket = String(item.bucket);
      // Tag rollups share the key ranges (bucket-keys.ts): the same query brings them.
      const tag = parseTagBucketKey(bucket);
      if (tag) sums.addTag(tag.key, tag.value, rollupFromItem(item));
      else sums.addSlice(parseBucketKey(bucket), rollupFromItem(item));
    }
    return sums;
  }

  private query(accountId: string, range: KeyRange): Promise<Record<string, unknown>[]> {
    return allItems((start) =>
      this.doc.send({
        operation: 'Query',
        input: {
          TableName: this.table,
          KeyConditionExpression: 'account_id = :account AND #bucket BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#bucket': 'bucket' },
          ExpressionAttributeValues: { ':account': accountId, ':lower': range.lower, ':upper': range.upper },
          // The overview should show a request the moment its row is folded.
          ConsistentRead: true,
          ExclusiveStartKey: start,
        },
      }),
    );
  }
}

interface StoredSummary {
  bucket: string;
  sums?: Uint8Array;
  stale?: string;
}

function unpackStored(stored: Uint8Array): PackedSums {
  return JSON.parse(gunzipSync(stored).toString('utf8')) as PackedSums;
}
