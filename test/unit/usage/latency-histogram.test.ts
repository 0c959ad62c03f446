import fc from 'fast-check';
import {
  bucketBounds,
  emptyHistogram,
  estimatePercentile,
  LAST_BOUNDED_BUCKET,
  LATENCY_BUCKET_COUNT,
  latencyAttribute,
  latencyBucket,
} from '../../../lambda/usage/rollups/latency-histogram';

function histogramOf(latencies: number[]): number[] {
  const histogram = emptyHistogram();
  for (const ms of latencies) histogram[latencyBucket(ms)]++;
  return histogram;
}

function exactPercentile(latencies: number[], q: number): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
}

describe('latency buckets', () => {
  it('puts each latency in the bucket whose bounds hold it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 600_000 }), (ms) => {
        const index = latencyBucket(ms);
        const { lower, upper } = bucketBounds(index);
        if (index === 0) expect(ms).toBeLessThanOrEqual(1);
        else expect(ms).toBeGreaterThan(lower);
        if (index <= LAST_BOUNDED_BUCKET) expect(ms).toBeLessThanOrEqual(upper);
      }),
    );
  });

  it('has fixed edges at the powers of two and an overflow bucket', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(1)).toBe(0);
    expect(latencyBucket(2)).toBe(4);
    expect(latencyBucket(3)).toBe(7); // 2^(6/4) ≈ 2.83 < 3 ≤ 2^(7/4) ≈ 3.36
    expect(latencyBucket(1024)).toBe(40);
    expect(latencyBucket(1025)).toBe(41);
    expect(latencyBucket(2 ** 18)).toBe(LAST_BOUNDED_BUCKET);
    expect(latencyBucket(2 ** 18 + 1)).toBe(LAST_BOUNDED_BUCKET + 1);
    expect(latencyBucket(10 ** 9)).toBe(LATENCY_BUCKET_COUNT - 1);
    expect(latencyBucket(-5)).toBe(0);
    expect(latencyBucket(Number.NaN)).toBe(0);
  });

  it('grows each bucket by 2^(1/4), about 19%', () => {
    for (let i = 2; i <= LAST_BOUNDED_BUCKET; i++) {
      const { lower, upper } = bucketBounds(i);
      expect(upper / lower).toBeCloseTo(2 ** 0.25, 10);
    }
  });

  it('names one attribute per bucket, sortable', () => {
    expect(latencyAttribute(0)).toBe('lat_00');
    expect(latencyAttribute(7)).toBe('lat_07');
    expect(latencyAttribute(LATENCY_BUCKET_COUNT - 1)).toBe('lat_73');
  });
});

describe('estimatePercentile', () => {
  it('is 0 for an empty histogram', () => {
    expect(estimatePercentile(emptyHistogram(), 0.95)).toBe(0);
  });

  it('stays within one bucket (≤ 19%, + rounding) of the exact nearest-rank p95', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 200_000 }), { minLength: 1, maxLength: 300 }), (latencies) => {
        const exact = exactPercentile(latencies, 0.95);
        const estimate = estimatePercentile(histogramOf(latencies), 0.95);
        expect(Math.abs(estimate - exact)).toBeLessThanOrEqual(exact * (2 ** 0.25 - 1) + 0.5);
      }),
    );
  });

  it('interpolates inside the bucket by rank', () => {
    // 100 requests in bucket 40 (512, 1024]: rank 95 sits 95% of the way through it.
    const histogram = emptyHistogram();
    histogram[40] = 100;
    const { lower, upper } = bucketBounds(40);
    expect(estimatePercentile(histogram, 0.95)).toBe(Math.round(lower + (upper - lower) * 0.95));
  });

  it('picks the bucket of the 95th request: 95 fast and 5 slow give a fast p95, 94 and 6 a slow one', () => {
    expect(estimatePercentile(histogramOf([...Array(95).fill(80), ...Array(5).fill(3000)]), 0.95)).toBeLessThanOrEqual(
      Math.ceil(80 * 2 ** 0.25),
    );
    expect(estimatePercentile(histogramOf([...Array(94).fill(80), ...Array(6).fill(3000)]), 0.95)).toBeGreaterThan(
      2500,
    );
  });

  it('reports the overflow bucket at its lower bound', () => {
    expect(estimatePercentile(histogramOf([10 ** 7]), 0.95)).toBe(2 ** 18);
  });
});
