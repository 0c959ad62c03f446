/**
 * The rate limit's sliding minute (docs/errors-and-limits.md, "The rate limit"), kept in counters
 * whose number does not follow the traffic.
 *
 * Time is cut into buckets of BUCKET_MS. A gate item holds `n`, the admissions it has counted
 * ever, and for each bucket of the window that saw an admission the value `n` had when that bucket
 * began (`w.<bucket>`). The admissions inside the window are then `n` minus the value of the
 * oldest bucket recorded in it. A request at bucket `k` is admitted when fewer than the limit were
 * admitted in buckets `k - 20` … `k` (the 21 buckets that overlap the 60 s before it), so no
 * 60-second span ever holds more than the limit; a token that sends at a steady rate below
 * 60/63 of its limit is never refused (the window it is held to is at most 63 s long).
 *
 * A condition cannot subtract, so the item also keeps `m = n - limit` (`m_limit` says which limit):
 * "fewer than the limit since bucket j began" is `m < w.j`, one comparison per bucket.
 */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 3_000;
/** Buckets a request is checked against: its own and the 20 before it. */
export const WINDOW_BUCKETS = WINDOW_MS / BUCKET_MS + 1;

/** The longest a request counted against a refused one stays counted: its bucket and the 20 after it (63 s). */
export const WHOLE_WINDOW_SECONDS = (WINDOW_BUCKETS * BUCKET_MS) / 1000;

export const bucketOf = (now: number) => Math.floor(now / BUCKET_MS);

/** The buckets whose admissions count against a request at `now`, oldest first. */
export function windowBuckets(now: number): number[] {
  const current = bucketOf(now);
  return Array.from({ length: WINDOW_BUCKETS }, (_, i) => current - WINDOW_BUCKETS + 1 + i);
}

/** The window's counters as a gate item holds them. */
export interface WindowCounters {
  /** Admissions counted ever. */
  n: number;
  /** Per bucket with an admission: `n` when it began. */
  starts: Map<number, number>;
}

export function countersOf(item: Record<string, unknown>): WindowCounters {
  const n = typeof item.n === 'number' ? item.n : 0;
  const starts = new Map<number, number>();
  const w = item.w;
  if (w && typeof w === 'object')
    for (const [bucket, start] of Object.entries(w as Record<string, unknown>))
      if (/^\d+$/.test(bucket) && typeof start === 'number') starts.set(Number(bucket), start);
  return { n, starts };
}

/** The oldest bucket of the window that saw an admission, if any. */
function oldestInWindow(counters: WindowCounters, now: number): number | undefined {
  return windowBuckets(now).find((bucket) => counters.starts.has(bucket));
}

/** Admissions counted in the window of a request at `now`. */
export function countInWindow(counters: WindowCounters, now: number): number {
  const oldest = oldestInWindow(counters, now);
  return oldest === undefined ? 0 : counters.n - counters.starts.get(oldest)!;
}

/** Recorded buckets that no request at `now` or later checks: the next write removes them. */
export function bucketsBefore(counters: WindowCounters, now: number): number[] {
  const first = windowBuckets(now)[0];
  return [...counters.starts.keys()].filter((bucket) => bucket < first);
}

/**
 * The `x-ratelimit-*` figures after a decision: what is left of the window ending now, and the
 * epoch second at which its oldest recorded bucket stops being checked (when room grows again;
 * now, for an empty window).
 */
export function windowFigures(
  limit: number,
  counters: WindowCounters,
  now: number,
): { counted: number; remaining: number; resetAt: number } {
  const counted = countInWindow(counters, now);
  const oldest = oldestInWindow(counters, now);
  const resetMs = oldest === undefined ? now : (oldest + WINDOW_BUCKETS) * BUCKET_MS;
  return { counted, remaining: Math.max(0, limit - counted), resetAt: Math.ceil(resetMs / 1000) };
}

/**
 * One token's gate is split over several items when its limit is high, so a busy token's writes
 * spread over several partitions (DynamoDB takes at most 1,000 write units a second on one): one
 * item per SHARD_REQUESTS_PER_MINUTE of limit, each holding its share of the limit.
 */
export const SHARD_REQUESTS_PER_MINUTE = 15_000;
export const MAX_GATE_SHARDS = 8;

export const shardCount = (limit: number, perShard = SHARD_REQUESTS_PER_MINUTE) =>
  Math.min(MAX_GATE_SHARDS, Math.max(1, Math.ceil(limit / perShard)));

/** The share of `limit` that shard `shard` of `shards` admits; the shares add up to the limit. */
export const shareOf = (limit: number, shards: number, shard: number) =>
  Math.floor(limit / shards) + (shard < limit % shards ? 1 : 0);
