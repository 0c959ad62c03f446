import { createHash } from 'node:crypto';
import { subjectsOf, type BudgetSubject } from '../budget';
import type { SpendFold } from '../ports';
import type { StreamedRow } from '../../usage/rollups/fold';
import type { FoldOutcome } from '../../usage/usage-stats';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { WatermarkedCounters } from '../../store/dynamodb/watermarked-counters';
import { eachInFlight } from '../../base/in-flight';
import { dayAttribute, monthAttribute, subjectKey, TOTAL_ATTRIBUTE, whole } from './subject-item';

/** Subject writes in flight at once per batch. */
const WRITES_IN_FLIGHT = 8;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/**
 * A shard's records stay in the stream 24 hours, so no batch of a shard is delivered again later
 * than that: its watermark is kept an hour longer, then dropped.
 */
const WATERMARK_KEPT_MS = 25 * HOUR_MS;
/** A row reaches the stream within its request's time limit and is delivered within the stream's 24 hours: no day older than two days is added to. */
const DAYS_KEPT = 2;

/** The watermark of one shard: short, so many shards fit in a 1 KB item. */
const watermarkAttribute = (lineage: string) =>
  `w#${createHash('sha256').update(lineage).digest('base64url').slice(0, 10)}`;

interface SubjectDelta {
  accountId: string;
  subject: BudgetSubject;
  lineage: string;
  rows: StreamedRow[];
}

/** What rows add to their subject's counters: lifetime, each row's UTC month and UTC day. */
function increments(rows: readonly StreamedRow[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const { row } of rows) {
    const at = Date.parse(row.ts);
    for (const attribute of [TOTAL_ATTRIBUTE, monthAttribute(at), dayAttribute(at)])
      sums[attribute] = (sums[attribute] ?? 0) + row.cost_nanos;
  }
  return sums;
}

/** One delta per subject and shard, its rows in stream order; rows without a cost add nothing. */
function subjectDeltas(rows: readonly StreamedRow[]): SubjectDelta[] {
  const deltas = new Map<string, SubjectDelta>();
  for (const streamed of rows) {
    if (!(whole(streamed.row.cost_nanos) > 0)) continue;
    for (const subject of subjectsOf(streamed.row)) {
      const id = `${streamed.row.account_id}\u0000${JSON.stringify(subject)}\u0000${streamed.lineage}`;
      let delta = deltas.get(id);
      if (!delta) {
        delta = { accountId: streamed.row.account_id, subject, lineage: streamed.lineage, rows: [] };
        deltas.set(id, delta);
      }
      delta.rows.push(streamed);
    }
  }
  return [...deltas.values()];
}

/** The attributes of a subject's item that nothing reads or adds to any more at `now`. */
export function staleAttributes(item: Record<string, unknown>, now: number): string[] {
  const oldestDay = dayAttribute(now - DAYS_KEPT * DAY_MS);
  const thisMonth = new Date(now);
  const oldestMonth = monthAttribute(Date.UTC(thisMonth.getUTCFullYear(), thisMonth.getUTCMonth() - 1, 1));
  return Object.entries(item)
    .filter(([name, value]) => {
      if (name.startsWith('d#')) return name < oldestDay;
      if (name.startsWith('m#')) return name < oldestMonth;
      if (!name.startsWith('w#') || typeof value !== 'string') return false;
      return Number(value.split('@')[1] ?? 0) * 1000 < now - WATERMARK_KEPT_MS;
    })
    .map(([name]) => name);
}

/**
 * Folds the spend of usage rows, as the usage-logs stream delivers them, into their subjects'
 * items (subject-item.ts): one conditional ADD per subject and shard per batch, whatever the
 * number of rows, with the per-shard watermark that counts each row exactly once
 * (store/dynamodb/watermarked-counters.ts). A write that finds months, days or watermarks no row
 * adds to any more is followed by one that removes them.
 */
export class DynamoSpendFold implements SpendFold {
  private readonly counters: WatermarkedCounters;

  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly now: () => number = Date.now,
  ) {
    this.counters = new WatermarkedCounters(doc);
  }

  /** Told about each subject write given up on (its rows are reported as failed). */
  onFailure?: (rows: number, error: unknown) => void;

  async fold(rows: StreamedRow[]): Promise<FoldOutcome> {
    const failed = new Set<StreamedRow>();
    await eachInFlight(subjectDeltas(rows), WRITES_IN_FLIGHT, (delta) =>
      this.apply(delta).catch((error: unknown) => {
        this.onFailure?.(delta.rows.length, error);
        for (const row of delta.rows) failed.add(row);
      }),
    );
    return { failed: [...failed] };
  }

  private async apply(delta: SubjectDelta): Promise<void> {
    const now = this.now();
    const key = subjectKey(delta.accountId, delta.subject);
    const written = await this.counters.add({
      table: this.table,
      key,
      watermark: watermarkAttribute(delta.lineage),
      rows: delta.rows,
      increments,
      stamp: `@${Math.floor(now / 1000)}`,
      returnItem: true,
    });
    const stale = written ? staleAttributes(written, now) : [];
    if (stale.length > 0) await this.prune(key, stale, written!);
  }

  /** Removes what no row adds to any more; a watermark only if no consumer moved it meanwhile (else it is left for later). */
  private async prune(key: Record<string, string>, stale: string[], seen: Record<string, unknown>): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const conditions: string[] = [];
    stale.forEach((attribute, i) => {
      names[`#r${i}`] = attribute;
      if (!attribute.startsWith('w#')) return;
      values[`:r${i}`] = seen[attribute];
      conditions.push(`#r${i} = :r${i}`);
    });
    try {
      await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: key,
          UpdateExpression: `REMOVE ${Object.keys(names).join(', ')}`,
          ConditionExpression: conditions.length ? conditions.join(' AND ') : undefined,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: conditions.length ? values : undefined,
        },
      });
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    }
  }
}
