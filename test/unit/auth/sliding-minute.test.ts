/**
 * The arithmetic of the bucketed sliding minute (lambda/auth/sliding-minute.ts): which buckets a
 * request is checked against, the count and figures a gate item's counters give, and how a limit
 * is split over gate items. The store's side is tested on DynamoDB Local in
 * test/integration/store/sliding-minute.test.ts.
 */
import {
  BUCKET_MS,
  bucketOf,
  bucketsBefore,
  countInWindow,
  countersOf,
  MAX_GATE_SHARDS,
  shardCount,
  shareOf,
  WINDOW_BUCKETS,
  windowBuckets,
  windowFigures,
} from '../../../lambda/auth/sliding-minute';

const T = Date.UTC(2026, 0, 5, 10, 0);

test('a request is checked against its own bucket and the 20 before it: every bucket that overlaps the 60 s before it', () => {
  const at = T + 1_500;
  const buckets = windowBuckets(at);
  expect(buckets).toHaveLength(WINDOW_BUCKETS);
  expect(WINDOW_BUCKETS).toBe(21);
  expect(buckets.at(-1)).toBe(bucketOf(at));
  // The oldest bucket overlaps (at - 60 s, at]; the one before it ends at or before at - 60 s.
  expect((buckets[0]! + 1) * BUCKET_MS).toBeGreaterThan(at - 60_000);
  expect(buckets[0]! * BUCKET_MS).toBeLessThanOrEqual(at - 60_000);
});

test('the count in the window is the count now less the count when its oldest recorded bucket began', () => {
  const k = bucketOf(T);
  const item = { n: 130, w: { [String(k - 25)]: 10, [String(k - 20)]: 40, [String(k - 3)]: 100, [String(k)]: 125 } };
  const counters = countersOf(item);
  expect(countInWindow(counters, T)).toBe(90);
  // One bucket later, bucket k - 20 has left: counted from k - 3.
  expect(countInWindow(counters, T + BUCKET_MS)).toBe(30);
  expect(bucketsBefore(counters, T)).toEqual([k - 25]);
  expect(countInWindow(countersOf({ n: 5, w: {} }), T)).toBe(0);
});

test('the figures: remaining room and the second the oldest recorded bucket leaves the window', () => {
  const k = bucketOf(T);
  const counters = countersOf({ n: 50, w: { [String(k - 4)]: 0 } });
  expect(windowFigures(100, counters, T)).toEqual({
    counted: 50,
    remaining: 50,
    resetAt: ((k - 4 + WINDOW_BUCKETS) * BUCKET_MS) / 1000,
  });
  // An empty window: all of the limit, and room "now".
  expect(windowFigures(100, countersOf({}), T + 400)).toEqual({
    counted: 0,
    remaining: 100,
    resetAt: (T + 1_000) / 1000,
  });
});

test('a limit is split into one gate item per 15,000 a minute, up to 8, whose shares add up to it', () => {
  expect([1, 100, 15_000, 15_001, 60_000, 120_000, 10_000_000].map((limit) => shardCount(limit))).toEqual([
    1,
    1,
    1,
    2,
    4,
    8,
    MAX_GATE_SHARDS,
  ]);
  for (const limit of [1, 7, 15_001, 60_000, 99_999, 120_000]) {
    const shards = shardCount(limit);
    const shares = Array.from({ length: shards }, (_, shard) => shareOf(limit, shards, shard));
    expect(shares.reduce((sum, share) => sum + share, 0)).toBe(limit);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
  }
});
