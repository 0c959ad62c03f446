/**
 * The arithmetic of the bucketed sliding minute (lambda/auth/sliding-minute.ts): which bucket a
 * request is checked from, the count and figures a gate item's counters give, when a refusal
 * closes its bucket, and how a limit is split over gate items. The store's side is tested on
 * DynamoDB Local in test/integration/store/sliding-minute.test.ts.
 */
import {
  BUCKET_MS,
  bucketOf,
  countInWindow,
  countersOf,
  isFinal,
  MAX_GATE_SHARDS,
  oldestBucket,
  oldestClosed,
  RING_SLOTS,
  shardCount,
  shareOf,
  slotOf,
  WINDOW_BUCKETS,
  windowFigures,
} from '../../../lambda/auth/sliding-minute';

const T = Date.UTC(2026, 0, 5, 10, 0);
const k = bucketOf(T);

/** An item with 4 admissions in bucket k-2, 1 in k-1 and 5 in k: its live slots (k-42 … k) hold each bucket's start. */
const item = (extra: Record<string, unknown> = {}) => {
  const slots: Record<string, number> = {};
  for (let bucket = k - 42; bucket <= k - 2; bucket++) slots[slotOf(bucket)] = 0;
  return { n: 10, b: k, ...slots, [slotOf(k - 1)]: 4, [slotOf(k)]: 5, ...extra };
};

test('a request is checked from the bucket 60 s before its own began: the span is 60 to 61.5 s', () => {
  expect(BUCKET_MS).toBe(1_500);
  expect(WINDOW_BUCKETS * BUCKET_MS).toBe(60_000);
  expect(oldestBucket(T + 1_499)).toBe(k - 40);
  expect(T - 60_000 - oldestBucket(T) * BUCKET_MS).toBe(0);
  expect(T + 1_499 - 60_000 - oldestBucket(T + 1_499) * BUCKET_MS).toBe(1_499);
});

test('the ring has one slot per bucket it must keep, each named by its bucket modulo its size', () => {
  expect(RING_SLOTS).toBe(40 + 2 + 6 + 1);
  expect(slotOf(k)).toBe(`r${k % RING_SLOTS}`);
  expect(slotOf(k + RING_SLOTS)).toBe(slotOf(k));
  expect(new Set(Array.from({ length: RING_SLOTS }, (_, i) => slotOf(k + i))).size).toBe(RING_SLOTS);
});

test('the count in the window is the count now less the count when its oldest bucket began', () => {
  const counters = countersOf(item());
  // 40 buckets on, k-2 is the oldest: everything since it counts.
  expect(countInWindow(counters, (k + 38) * BUCKET_MS)).toBe(10);
  expect(countInWindow(counters, (k + 39) * BUCKET_MS)).toBe(6);
  expect(countInWindow(counters, (k + 40) * BUCKET_MS)).toBe(5);
  // Buckets after the newest started at n: nothing counted once the newest has left.
  expect(countInWindow(counters, (k + 41) * BUCKET_MS)).toBe(0);
  // A late write at k-2 counts everything since its own oldest bucket, later ones included.
  expect(countInWindow(counters, (k - 2) * BUCKET_MS)).toBe(10);
});

test('a refusal is final when the window is full without its oldest bucket; its time closes that bucket 60 s later', () => {
  const counters = countersOf(item());
  const at = (k + 38) * BUCKET_MS + 200;
  expect(isFinal(6, counters, at)).toBe(true);
  expect(isFinal(7, counters, at)).toBe(false);
  const closedAt = (k - 2) * BUCKET_MS + 700;
  const closed = countersOf(item({ z: closedAt }));
  // The oldest bucket is k-2 from k+38 on; it stops counting when its closing time is 60 s old.
  expect(oldestClosed(closed, closedAt + 60_000 - 1)).toBe(false);
  expect(countInWindow(closed, closedAt + 60_000 - 1)).toBe(10);
  expect(oldestClosed(closed, closedAt + 60_000)).toBe(true);
  expect(countInWindow(closed, closedAt + 60_000)).toBe(6);
});

test('the figures: remaining room and the second the oldest bucket with an admission stops counting', () => {
  const counters = countersOf(item());
  const at = (k + 10) * BUCKET_MS;
  expect(windowFigures(25, counters, at)).toEqual({
    counted: 10,
    remaining: 15,
    resetAt: Math.ceil(((k - 2 + WINDOW_BUCKETS + 1) * BUCKET_MS) / 1000),
  });
  // A closed bucket stops counting 60 s after its closing time, before its bucket ends.
  const closedAt = (k - 2) * BUCKET_MS + 300;
  expect(windowFigures(25, countersOf(item({ z: closedAt })), at).resetAt).toBe(Math.ceil((closedAt + 60_000) / 1000));
  // An empty window: room now.
  expect(windowFigures(25, countersOf({ n: 3, b: k }), (k + 50) * BUCKET_MS)).toEqual({
    counted: 0,
    remaining: 25,
    resetAt: Math.ceil(((k + 50) * BUCKET_MS) / 1000),
  });
});

test('a limit is split into one gate item per 15,000 a minute, up to 8, whose shares add up to it', () => {
  expect(shardCount(100)).toBe(1);
  expect(shardCount(15_000)).toBe(1);
  expect(shardCount(15_001)).toBe(2);
  expect(shardCount(120_000)).toBe(MAX_GATE_SHARDS);
  for (const limit of [1, 7, 15_001, 59_999, 120_000]) {
    const shards = shardCount(limit);
    const shares = Array.from({ length: shards }, (_, shard) => shareOf(limit, shards, shard));
    expect(shares.reduce((sum, share) => sum + share, 0)).toBe(limit);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
  }
});
