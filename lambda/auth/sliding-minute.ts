/**
 * The rate limit's sliding minute (docs/errors-and-limits.md, "The rate limit"), kept in counters
 * whose number does not follow the traffic.
 *
 * Time is cut into buckets of BUCKET_MS. A gate item holds `n`, the admissions it has counted
 * ever, `b`, the newest bucket any admission was stamped in, and a ring of RING_SLOTS numbers
 * (`r0` …): the slot of bucket `j` (`j mod RING_SLOTS`) holds `C(j)`, the value `n` had when `j`
 * began, i.e. the admissions stamped before `j`. A request stamped at `t`, in bucket `k`, is
 * admitted when fewer than the limit were admitted since bucket `k - WINDOW_BUCKETS` began (60 s
 * before `k` began), so no 60-second span ever holds more than the limit; the span checked is at
 * most 61.5 s long, so a token sending steadily under 60/61.5 of its limit (97.5 %) is never
 * refused, and at 95 % its requests may reach the store up to 1.6 s out of step with each other.
 *
 * A request is counted in the bucket of its own time, even when its write lands after a later
 * bucket began (it then adds one to the later buckets' starts), so a slow write is never held
 * against the window for longer than its own time says.
 *
 * A condition cannot subtract, so the item also keeps `m = n - limit` (`m_limit` says which limit):
 * "fewer than the limit since bucket `o` began" is `m < C(o)`, one comparison.
 *
 * A refusal that no later request of its bucket can undo (`isFinal`) records its time as `z`:
 * every admission of that bucket happened by `z`, so from `z + 60 s` on the bucket no longer
 * counts, and `Retry-After: 60` holds exactly (docs/errors-and-limits.md).
 */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 1_500;
/** How many buckets back the oldest bucket a request is checked against lies: 60 s. */
export const WINDOW_BUCKETS = WINDOW_MS / BUCKET_MS;
/** How many buckets behind the newest a slow write is still counted in its own bucket (beyond, in the oldest it can). */
export const LATE_BUCKETS = 2;
/** Empty slots kept ahead of the newest bucket, so a write up to this many buckets later starts its bucket without knowing `b` exactly. */
export const AHEAD_BUCKETS = 6;
/** The ring: the window's buckets, the late ones before it, and the empty ones ahead. */
export const RING_SLOTS = WINDOW_BUCKETS + LATE_BUCKETS + AHEAD_BUCKETS + 1;
/** `Retry-After` of a 429: the requests a refusal was counted against have all left the window by then. */
export const RETRY_AFTER_SECONDS = WINDOW_MS / 1000;

export const bucketOf = (now: number) => Math.floor(now / BUCKET_MS);
export const bucketStart = (bucket: number) => bucket * BUCKET_MS;
/** The ring slot attribute of a bucket. */
export const slotOf = (bucket: number) => `r${((bucket % RING_SLOTS) + RING_SLOTS) % RING_SLOTS}`;
/** The oldest bucket whose admissions count against a request at `now`. */
export const oldestBucket = (now: number) => bucketOf(now) - WINDOW_BUCKETS;

/** The window's counters as a gate item holds them. */
export interface WindowCounters {
  /** Admissions counted ever. */
  n: number;
  /** The newest bucket an admission was stamped in; undefined for an item not set up yet. */
  b?: number;
  /** Ring slot attribute → its value. */
  slots: Map<string, number>;
  /** When a final refusal closed its bucket (epoch ms), if one did. */
  z?: number;
}

export function countersOf(item: Record<string, unknown>): WindowCounters {
  const n = typeof item.n === 'number' ? item.n : 0;
  const slots = new Map<string, number>();
  for (let slot = 0; slot < RING_SLOTS; slot++) {
    const value = item[`r${slot}`];
    if (typeof value === 'number') slots.set(`r${slot}`, value);
  }
  return {
    n,
    b: typeof item.b === 'number' ? item.b : undefined,
    slots,
    z: typeof item.z === 'number' ? item.z : undefined,
  };
}

/** `C(bucket)`: admissions stamped before it began, for a bucket the ring still holds. */
export function startOf(counters: WindowCounters, bucket: number): number {
  const { b, n } = counters;
  if (b === undefined || bucket > b) return n;
  return counters.slots.get(slotOf(bucket)) ?? 0;
}

/** Whether the window's oldest bucket no longer counts at `now`: a final refusal closed it 60 s ago or more. */
export function oldestClosed(counters: WindowCounters, now: number): boolean {
  const { z } = counters;
  return z !== undefined && z >= bucketStart(oldestBucket(now)) && z <= now - WINDOW_MS;
}

/** Admissions counted in the window of a request at `now`. */
export function countInWindow(counters: WindowCounters, now: number): number {
  const oldest = oldestBucket(now) + (oldestClosed(counters, now) ? 1 : 0);
  return counters.n - startOf(counters, oldest);
}

/**
 * Whether a refusal at `now` holds for the rest of its bucket whatever the time: the window is
 * full even without its oldest bucket, which is the only one that may leave within the bucket.
 */
export function isFinal(share: number, counters: WindowCounters, now: number): boolean {
  return counters.n - startOf(counters, oldestBucket(now) + 1) >= share;
}

/**
 * The `x-proxy-ratelimit-*` figures after a decision: what is left of the window ending now, and
 * the epoch second at which its oldest bucket with an admission stops counting (when room grows
 * again; now, for an empty window).
 */
export function windowFigures(
  limit: number,
  counters: WindowCounters,
  now: number,
): { counted: number; remaining: number; resetAt: number } {
  const counted = countInWindow(counters, now);
  let resetMs = now;
  const first = oldestBucket(now) + (oldestClosed(counters, now) ? 1 : 0);
  for (let bucket = first; counters.b !== undefined && bucket <= counters.b; bucket++) {
    if (startOf(counters, bucket + 1) > startOf(counters, bucket)) {
      const leaves = bucketStart(bucket + WINDOW_BUCKETS + 1);
      const closedAt = counters.z !== undefined && bucketOf(counters.z) === bucket ? counters.z + WINDOW_MS : leaves;
      resetMs = Math.min(leaves, closedAt);
      break;
    }
  }
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
