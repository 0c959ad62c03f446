/**
 * Throughput in rounds: a contender's figure is the median of its rounds' best steps, and a ratio
 * between two contenders the median of their per-round ratios, so one fluke window moves neither.
 */
import { roundOrder, sameRunRatio, summariseRamp, type RoundStep } from '../../bench/ramp';

const step = (round: number, concurrency: number, rps: number, errors = 0): RoundStep => ({ round, concurrency, rps, errors, durationMs: 1000, completed: rps, p50: 1, p99: 2 });

test('each round rotates the order by one, so no contender always follows the same one', () => {
  expect([0, 1, 2, 3].map((round) => roundOrder(['a', 'b', 'c'], round).join(''))).toEqual(['abc', 'bca', 'cab', 'abc']);
  expect(roundOrder([], 5)).toEqual([]);
});

test("a contender's throughput is the median of its rounds' best steps with zero errors", () => {
  const figure = summariseRamp(
    [step(0, 8, 300), step(0, 32, 500), step(1, 8, 320), step(1, 32, 900, 3), step(1, 96, 450), step(2, 8, 310), step(2, 32, 480)],
    3,
  );
  // Round 2's 900 req/s had errors: its best is 450.
  expect(figure.roundMaxRps).toEqual([500, 450, 480]);
  expect(figure.maxRps).toBe(480);
  expect(figure.atConcurrency).toBe(32);
  expect(figure.steps).toHaveLength(7);
});

test('a round whose every step had errors counts as zero', () => {
  const figure = summariseRamp([step(0, 8, 300, 1), step(1, 8, 400)], 2);
  expect(figure.roundMaxRps).toEqual([0, 400]);
});

test('a ratio within one run is the median of the per-round ratios: one fluke round does not move it', () => {
  const ours = { maxRps: 500, roundMaxRps: [500, 510, 900] };
  const theirs = { maxRps: 800, roundMaxRps: [800, 850, 600] };
  expect(sameRunRatio(ours, theirs)).toBeCloseTo(0.625);
  // The ratio of the two medians would be 510 / 800.
  expect(sameRunRatio(ours, theirs)).not.toBeCloseTo(510 / 800, 3);
});

test('runs from before rounds (no per-round maxima) compare their maxima, and a missing contender gives no ratio', () => {
  expect(sameRunRatio({ maxRps: 600 }, { maxRps: 800 })).toBeCloseTo(0.75);
  expect(sameRunRatio({ maxRps: 600, roundMaxRps: [600] }, { maxRps: 800, roundMaxRps: [700, 900] })).toBeCloseTo(0.75);
  expect(sameRunRatio(undefined, { maxRps: 800 })).toBeNaN();
});
