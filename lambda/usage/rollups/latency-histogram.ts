/**
 * A fixed, log-scale latency histogram. Fixed buckets make histograms of
 * different hours, models and requesters add up exactly, so a rollup can keep
 * one counter per bucket (`lat_00` … `lat_73`, atomic ADD 1) and any slice of a
 * period still gets a p95.
 *
 * Bucket 0 holds [0, 1] ms; bucket i (1 … 72) holds (2^((i-1)/4), 2^(i/4)] ms,
 * so each bucket is 2^(1/4) ≈ 1.19 times as wide as the one before; bucket 73
 * holds everything above 2^18 ms (about 4.4 minutes).
 *
 * Precision: the percentile's bucket is found exactly; inside it the value is
 * interpolated linearly between the bucket's bounds. The estimate is therefore
 * never further from the exact (nearest-rank) percentile than one bucket's
 * width: at most 19% of the value, plus rounding to whole milliseconds.
 * In the overflow bucket the estimate is its lower bound, 262144 ms.
 */
export const STEPS_PER_DOUBLING = 4;
export const LAST_BOUNDED_BUCKET = 18 * STEPS_PER_DOUBLING;
export const LATENCY_BUCKET_COUNT = LAST_BOUNDED_BUCKET + 2;

/** Upper bound (ms, inclusive) of each bucket; the overflow bucket has none. */
const UPPER_BOUNDS_MS: readonly number[] = Array.from(
  { length: LAST_BOUNDED_BUCKET + 1 },
  (_, i) => 2 ** (i / STEPS_PER_DOUBLING),
);

export type LatencyHistogram = number[];

export function emptyHistogram(): LatencyHistogram {
  return new Array<number>(LATENCY_BUCKET_COUNT).fill(0);
}

export function latencyBucket(latencyMs: number): number {
  const ms = Number.isFinite(latencyMs) ? Math.max(0, latencyMs) : 0;
  if (ms <= 1) return 0;
  // The logarithm gives the bucket up to floating-point error; the table decides the edges.
  let index = Math.min(LAST_BOUNDED_BUCKET + 1, Math.max(1, Math.ceil(Math.log2(ms) * STEPS_PER_DOUBLING)));
  while (index > 1 && ms <= UPPER_BOUNDS_MS[index - 1]) index--;
  while (index <= LAST_BOUNDED_BUCKET && ms > UPPER_BOUNDS_MS[index]) index++;
  return index;
}

/** The lower (exclusive) and upper (inclusive) bound of a bucket, in ms. */
export function bucketBounds(index: number): { lower: number; upper: number } {
  if (index === 0) return { lower: 0, upper: 1 };
  const lower = UPPER_BOUNDS_MS[index - 1];
  return { lower, upper: index > LAST_BOUNDED_BUCKET ? lower : UPPER_BOUNDS_MS[index] };
}

/** The rollup attribute that counts a bucket: `lat_00` … `lat_73`. */
export function latencyAttribute(index: number): string {
  return `lat_${String(index).padStart(2, '0')}`;
}

export function addHistogram(into: LatencyHistogram, from: readonly number[]): void {
  for (let i = 0; i < LATENCY_BUCKET_COUNT; i++) into[i] += from[i] ?? 0;
}

/** The q-quantile (0 < q ≤ 1, nearest rank) in whole ms, interpolated inside its bucket; 0 when empty. */
export function estimatePercentile(histogram: readonly number[], q: number): number {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * total));
  let before = 0;
  for (let i = 0; i < histogram.length; i++) {
    const count = histogram[i];
    if (count > 0 && before + count >= rank) {
      const { lower, upper } = bucketBounds(i);
      return Math.round(lower + ((upper - lower) * (rank - before)) / count);
    }
    before += count;
  }
  return 0;
}
