import type { UsageRow } from '../usage-row';
import { dayKey, hourKey, tagBucketKeys } from './bucket-keys';
import { rowIncrements, tagIncrements } from './rollup';
import { sortableSequence } from '../../store/dynamodb/watermarked-counters';

/**
 * A usage row as the table's stream delivered it. `lineage` names the stream
 * shard it came from and `sequence` its place in that shard: records of one
 * shard arrive in sequence order, which is what makes a fold idempotent.
 */
export interface StreamedRow {
  row: UsageRow;
  lineage: string;
  sequence: string;
}

/** What one batch adds to one rollup item, with the stream positions it covers. */
export interface BucketDelta {
  accountId: string;
  bucket: string;
  lineage: string;
  increments: Record<string, number>;
  /** The rows folded in, in stream order (first and last give the positions). */
  rows: StreamedRow[];
}

/** Every rollup item a row counts in: its UTC hour and its UTC day, per provider, model, requester, token and endpoint kind. */
export function bucketsOf(row: UsageRow): string[] {
  const at = new Date(row.ts);
  const dims = {
    provider: row.provider,
    model: row.model,
    requester: row.requester ?? '',
    token: row.token_id ?? '',
    kind: row.kind ?? '',
  };
  return [hourKey(at, dims), dayKey(at, dims)];
}

/**
 * Every rollup item a row counts in with what it adds to each: the buckets above, and its UTC
 * hour and day under each of its tags. The row's tags are those the fold kept for the stats
 * (a value past its key's cap already replaced, tag-values.ts).
 */
function contributionsOf(row: UsageRow): { bucket: string; increments: Record<string, number> }[] {
  const all = rowIncrements(row);
  const contributions = bucketsOf(row).map((bucket) => ({ bucket, increments: all }));
  const tags = Object.entries(row.tags ?? {});
  if (tags.length === 0) return contributions;
  const perTag = tagIncrements(row);
  const at = new Date(row.ts);
  for (const [key, value] of tags)
    for (const bucket of tagBucketKeys(at, key, value)) contributions.push({ bucket, increments: perTag });
  return contributions;
}

export { sortableSequence };

/**
 * Folds a batch into one delta per rollup item and shard: the batch then
 * costs one ADD per item, whatever the number of rows.
 */
export function foldRows(rows: readonly StreamedRow[]): BucketDelta[] {
  const deltas = new Map<string, BucketDelta>();
  const ordered = [...rows].sort((a, b) => compareSequences(a.sequence, b.sequence));
  for (const streamed of ordered) {
    for (const { bucket, increments } of contributionsOf(streamed.row)) {
      const id = `${streamed.row.account_id}\u0000${bucket}\u0000${streamed.lineage}`;
      let delta = deltas.get(id);
      if (!delta) {
        delta = { accountId: streamed.row.account_id, bucket, lineage: streamed.lineage, increments: {}, rows: [] };
        deltas.set(id, delta);
      }
      for (const [attribute, amount] of Object.entries(increments))
        delta.increments[attribute] = (delta.increments[attribute] ?? 0) + amount;
      delta.rows.push(streamed);
    }
  }
  return [...deltas.values()];
}

/** What some of a delta's rows (those a redelivery had not counted yet) add to its bucket. */
export function bucketIncrements(delta: BucketDelta, rows: readonly StreamedRow[]): Record<string, number> {
  const own = foldRows(rows).find(
    (candidate) => candidate.bucket === delta.bucket && candidate.accountId === delta.accountId,
  );
  return own?.increments ?? {};
}

export function compareSequences(a: string, b: string): number {
  const left = sortableSequence(a);
  const right = sortableSequence(b);
  return left < right ? -1 : left > right ? 1 : 0;
}
