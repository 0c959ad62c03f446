import {
  AHEAD_BUCKETS,
  bucketOf,
  bucketStart,
  LATE_BUCKETS,
  oldestBucket,
  RING_SLOTS,
  slotOf,
  WINDOW_MS,
} from '../sliding-minute';

/**
 * The expressions of the gate's count (sliding-minute.ts), one per way a request's bucket relates
 * to the item's newest bucket `b`. Each names only the ring slots it reads or writes, so a
 * request in the newest bucket checks one slot; none needs attribute-name placeholders.
 *
 * - `near`: `b` is between `lo` and the request's bucket `k`, and `lo` is at most AHEAD_BUCKETS
 *   before `k`. The slots after `b` are empty (every start keeps the next AHEAD_BUCKETS empty), so
 *   `if_not_exists` starts `k` and any bucket between at `n` without knowing `b` exactly.
 * - `exact`: `b` is this value (undefined: the item's counters are not set up yet); for a token
 *   idle longer than AHEAD_BUCKETS, it starts the buckets from `b` to `k` at `n`.
 * - `late`: the write lands after bucket `b`, later than its own, began: it is counted in its own
 *   bucket and adds one to the starts of the buckets after it up to `b`. Should the item's newest
 *   bucket move on meanwhile, the buckets started since do not count it out: it is held against
 *   them too, which only ever counts more (so a busy item never sends it round again).
 */
export type CountPath =
  { kind: 'near'; lo: number; fresh: boolean } | { kind: 'exact'; b: number | undefined } | { kind: 'late'; b: number };

/** Where a request stamped at `now` is counted, given the item's newest bucket `b`. */
export interface Placement {
  path: CountPath;
  /** The bucket counted in and the time checked at: the request's own, or the oldest a late write may still take. */
  bucket: number;
  at: number;
}

/** The path the item's `b` calls for (an item with no `b` is set up by an `exact` write). */
export function placementFor(now: number, b: number | undefined): Placement {
  const k = bucketOf(now);
  if (b === undefined) return { path: { kind: 'exact', b }, bucket: k, at: now };
  if (b > k) {
    const bucket = Math.max(k, b - LATE_BUCKETS);
    return { path: { kind: 'late', b }, bucket, at: Math.max(now, bucketStart(bucket)) };
  }
  if (b >= k - AHEAD_BUCKETS) return { path: { kind: 'near', lo: b, fresh: false }, bucket: k, at: now };
  return { path: { kind: 'exact', b }, bucket: k, at: now };
}

/** The path a request guesses from the newest bucket this instance last saw on the item (none: any within AHEAD_BUCKETS, or a fresh item). */
export function guessedPlacement(now: number, seen: number | undefined): Placement {
  if (seen !== undefined) return placementFor(now, seen);
  const k = bucketOf(now);
  return { path: { kind: 'near', lo: k - AHEAD_BUCKETS, fresh: true }, bucket: k, at: now };
}

/** Whether the item's `b` and `n` are what the path assumed when it was placed (a late write placed on an older `b` is placed again). */
export function pathHolds(path: CountPath, b: number | undefined, n: number, bucket: number): boolean {
  if (path.kind === 'near') return (b !== undefined && b >= path.lo && b <= bucket) || (path.fresh && n === 0);
  return b === path.b;
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + 1 + i);

export interface CountExpression {
  update: string;
  condition: string;
  values: Record<string, unknown>;
}

/**
 * The count's own part of the UpdateItem: the room condition, the path's condition on `b`, and
 * the writes to `b`, the ring and `n`/`m`. `closed` adds the alternative that the window's oldest
 * bucket was closed by a final refusal 60 s ago or more (then the count starts at the next bucket).
 */
export function countExpression(placement: Placement, closed: boolean, rebase?: Rebase): CountExpression {
  const { path, bucket: k, at } = placement;
  const o = oldestBucket(at);
  const values: Record<string, unknown> = {};
  const conditions: string[] = [];
  const sets: string[] = [];
  const removes: string[] = [];

  if (path.kind === 'near') {
    const onB = path.lo === k ? 'b = :k' : 'b BETWEEN :lo AND :k';
    conditions.push(path.fresh ? `(${onB} OR n = :zero)` : onB);
    if (path.lo !== k) values[':lo'] = path.lo;
    if (path.fresh) values[':zero'] = 0;
    values[':k'] = k;
    if (path.lo < k) sets.push('b = :k');
    for (const j of range(path.lo, k)) sets.push(`${slotOf(j)} = if_not_exists(${slotOf(j)}, n)`);
    for (const j of range(Math.max(path.lo + AHEAD_BUCKETS, k), k + AHEAD_BUCKETS)) removes.push(slotOf(j));
  } else if (path.kind === 'exact') {
    conditions.push(path.b === undefined ? 'attribute_not_exists(b)' : 'b = :b');
    if (path.b !== undefined) values[':b'] = path.b;
    values[':k'] = k;
    sets.push('b = :k');
    const from = Math.max(path.b ?? -Infinity, k + AHEAD_BUCKETS - RING_SLOTS);
    for (const j of range(from, k)) sets.push(`${slotOf(j)} = n`);
    for (const j of range(k, k + AHEAD_BUCKETS)) removes.push(slotOf(j));
    // Counters of the earlier layout, if the item has them.
    if (path.b === undefined) removes.push('w');
  } else {
    conditions.push('b >= :b');
    values[':b'] = path.b;
    for (const j of range(k, path.b)) sets.push(`${slotOf(j)} = ${slotOf(j)} + :one`);
  }

  sets.push('last_used_at = :used');
  values[':used'] = new Date(at).toISOString();
  let counts = ' ADD n :one, m :one';
  if (rebase) {
    // The room was checked on the item read, whose count this write requires unchanged.
    conditions.push('n = :n');
    Object.assign(values, { ':n': rebase.n, ':n1': rebase.n + 1, ':m1': rebase.n + 1 - rebase.share });
    sets.push('n = :n1', 'm = :m1', 'm_limit = :share');
    removes.push('z');
    counts = '';
  } else {
    const room = roomCondition(placement, o, closed, values);
    if (room) conditions.push(room);
  }
  if (counts || path.kind === 'late') values[':one'] = 1;
  const update = `SET ${sets.join(', ')}${counts}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`;
  return { update, condition: conditions.join(' AND '), values };
}

/** A count that also sets the counters for a new share (`m = n - share`), from the item a refusal returned. */
export interface Rebase {
  n: number;
  share: number;
}

/** Fewer than the share admitted since the oldest bucket began (or the one after it, once closed); none when no admission is that recent. */
function roomCondition(placement: Placement, o: number, closed: boolean, values: Record<string, unknown>) {
  const { path, at } = placement;
  const newest = path.kind === 'near' ? path.lo : path.b;
  // An item not set up, or idle since before the window: nothing counted in the window.
  if (path.kind === 'exact' && (newest === undefined || newest < o)) return '';
  const fromOldest = `m < ${slotOf(o)}`;
  if (!closed) return fromOldest;
  values[':zlo'] = bucketStart(o);
  values[':edge'] = at - WINDOW_MS;
  const isClosed = 'z BETWEEN :zlo AND :edge';
  // The bucket after the oldest began after `b` (exact path): nothing counted from there.
  const fromNext = path.kind === 'exact' && newest === o ? isClosed : `${isClosed} AND m < ${slotOf(o + 1)}`;
  return `(${fromOldest} OR (${fromNext}))`;
}

/** The ring slots and newest bucket of an item set up at `now` with nothing counted. */
export function freshRing(now: number): Record<string, number> {
  const ring: Record<string, number> = { b: bucketOf(now) };
  for (let slot = 0; slot < RING_SLOTS; slot++) ring[`r${slot}`] = 0;
  return ring;
}

/** The slots a refusal's closing time `z` stays useful for: until its bucket leaves every window. */
export const closeStaleBefore = (now: number) => bucketStart(oldestBucket(now));
