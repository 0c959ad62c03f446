import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { MAX_STORED_BYTES } from '../../../lambda/usage/dynamodb/period-summaries';
import { DAILY_CAPS } from '../../../lambda/usage/dynamodb/daily-caps';
import { MAX_LABEL_CHARS } from '../../../lambda/usage/rollups/bucket-keys';
import { DimensionSums, type PackedSums } from '../../../lambda/usage/rollups/dimension-sums';
import { LATENCY_BUCKET_COUNT } from '../../../lambda/usage/rollups/latency-histogram';
import { COUNTERS, emptyRollup, type Rollup } from '../../../lambda/usage/rollups/rollup';

const rollupArb = fc
  .record({
    counts: fc.array(fc.nat({ max: 2 ** 40 }), { minLength: COUNTERS.length, maxLength: COUNTERS.length }),
    latency: fc.array(fc.nat({ max: 1000 }), { minLength: LATENCY_BUCKET_COUNT, maxLength: LATENCY_BUCKET_COUNT }),
  })
  .map(({ counts, latency }): Rollup => {
    const rollup = emptyRollup();
    COUNTERS.forEach((counter, i) => (rollup.counts[counter] = counts[i]));
    rollup.latency = latency;
    return rollup;
  });

const sliceArb = fc.record({
  provider: fc.constantFrom('prov-a', 'prov-b', 'prov-c'),
  model: fc.string({ maxLength: 12 }),
  requester: fc.string({ maxLength: 12 }),
  token: fc.constantFrom('', 'acc_t1', 'acc_t2'),
  kind: fc.constantFrom('', 'chat', 'embeddings'),
  rollup: rollupArb,
});

const tagArb = fc.record({ key: fc.string({ maxLength: 8 }), value: fc.string({ maxLength: 8 }), rollup: rollupArb });

type Generated<A> = A extends fc.Arbitrary<infer T> ? T : never;

function sumsOf(slices: readonly Generated<typeof sliceArb>[], tags: readonly Generated<typeof tagArb>[]) {
  const sums = new DimensionSums();
  for (const { rollup, ...dims } of slices) sums.addSlice(dims, rollup);
  for (const { key, value, rollup } of tags) sums.addTag(key, value, rollup);
  return sums;
}

describe('DimensionSums', () => {
  it('comes back from its packed form, through JSON, exactly as it was', () => {
    fc.assert(
      fc.property(fc.array(sliceArb, { maxLength: 20 }), fc.array(tagArb, { maxLength: 10 }), (slices, tags) => {
        const sums = sumsOf(slices, tags);
        const stored = JSON.parse(JSON.stringify(sums.toPacked())) as PackedSums;
        expect(new DimensionSums().addPacked(stored)).toEqual(sums);
      }),
      { numRuns: 50 },
    );
  });

  it('adds up the same whether slices are summed at once or in parts (an hour at a time, then the period)', () => {
    fc.assert(
      fc.property(
        fc.array(sliceArb, { maxLength: 20 }),
        fc.array(tagArb, { maxLength: 10 }),
        fc.nat(),
        (slices, tags, cut) => {
          const at = cut % (slices.length + 1);
          const parts = new DimensionSums();
          parts.addPacked(sumsOf(slices.slice(0, at), tags).toPacked());
          parts.addPacked(sumsOf(slices.slice(at), []).toPacked());
          expect(parts).toEqual(sumsOf(slices, tags));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('fits one item at every daily cap: requesters, models and tag values at their longest, 100 tokens, counts of 12 digits', () => {
    const busy = emptyRollup();
    COUNTERS.forEach((counter, i) => (busy.counts[counter] = 123_456_789_012 + i));
    busy.latency = busy.latency.map((_, i) => 1_000 + i);
    const long = (prefix: string, i: number) => `${prefix}${i}`.padEnd(MAX_LABEL_CHARS, 'x');
    const sums = new DimensionSums();
    for (let i = 0; i < Math.max(DAILY_CAPS.requesters, DAILY_CAPS.models); i++) {
      sums.addSlice(
        {
          provider: 'prov-a',
          model: long('model-', i % DAILY_CAPS.models),
          requester: long('requester-', i % DAILY_CAPS.requesters),
          token: `acc_token${i % 100}`,
          kind: 'chat',
        },
        busy,
      );
    }
    // Tag rollups keep no latency (rollup.ts, tagIncrements).
    const tagged: Rollup = { counts: busy.counts, latency: emptyRollup().latency };
    for (let k = 0; k < DAILY_CAPS.tagKeys; k++)
      for (let v = 0; v < DAILY_CAPS.tagValues; v++)
        sums.addTag(long('key-', k).slice(0, 40), long('value-', v), tagged);
    expect(sums.requesters.size).toBe(DAILY_CAPS.requesters);
    const size = gzipSync(JSON.stringify(sums.toPacked())).byteLength;
    expect(size).toBeLessThan(MAX_STORED_BYTES);
  });
});
