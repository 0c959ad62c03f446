/**
 * Throughput in rounds. One ramp per contender gave a single "best step" each, and the ratio of two
 * such maxima moved by a third between runs of the same code: each is one draw of a noisy window,
 * and the two draws lie minutes apart. So every ramp runs in rounds; in each round every step is
 * taken by every contender in turn (in an order rotated per round, so no contender always follows
 * the same one), a contender's throughput is the median of its rounds' best steps, and a ratio
 * between two contenders is the median of their per-round ratios: each pair of maxima was measured
 * within seconds of each other, under the same machine.
 */
import type { ThroughputStep } from './load-protocol';
import { median } from './stats';

export interface RampStep {
  concurrency: number;
  durationMs: number;
}

/** A step as measured, with the round it belongs to. */
export type RoundStep = ThroughputStep & { round: number };

export interface RampFigure {
  /** Every step of every round, in the order taken. */
  steps: RoundStep[];
  /** The median over rounds of each round's best step with zero errors. */
  maxRps: number;
  /** The concurrency of the round best nearest that median. */
  atConcurrency: number;
  /** Each round's best step with zero errors (0 when every step of the round had errors), by round. */
  roundMaxRps: number[];
}

/** The contenders in the order they take a step in `round`: rotated by one each round. */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  const shift = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/** Each round's best step with zero errors, by round (undefined for a round without one). */
export function roundBests<S extends RoundStep>(steps: readonly S[], rounds: number): Array<S | undefined> {
  const bests: Array<S | undefined> = Array.from({ length: rounds }, () => undefined);
  for (const step of steps) {
    const top = bests[step.round];
    if (step.errors === 0 && (!top || step.rps > top.rps)) bests[step.round] = step;
  }
  return bests;
}

export function summariseRamp(steps: RoundStep[], rounds: number): RampFigure {
  const bests = roundBests(steps, rounds);
  const roundMaxRps = bests.map((best) => best?.rps ?? 0);
  const maxRps = rounds > 0 ? median(roundMaxRps) : 0;
  const nearest = bests.reduce<RoundStep | undefined>((top, best) => (best && (!top || Math.abs(best.rps - maxRps) < Math.abs(top.rps - maxRps)) ? best : top), undefined);
  return { steps, maxRps, atConcurrency: nearest?.concurrency ?? 0, roundMaxRps };
}

type RampLike = { maxRps: number; roundMaxRps?: number[] } | undefined;

/**
 * a / b within one run: the median of the per-round ratios when both ran the same rounds, else
 * (a run from before rounds) the ratio of the two maxima.
 */
export function sameRunRatio(a: RampLike, b: RampLike): number {
  if (!a || !b) return Number.NaN;
  const ours = a.roundMaxRps;
  const theirs = b.roundMaxRps;
  if (ours && theirs && ours.length === theirs.length && ours.length > 0) {
    const ratios = ours.map((rps, round) => rps / theirs[round]!).filter(Number.isFinite);
    return ratios.length > 0 ? median(ratios) : Number.NaN;
  }
  return a.maxRps / b.maxRps;
}
