import type { RampFigure } from '../../bench/ramp';

/** A contender's throughput at `factor` times another's, in every round (runs from before rounds have one maximum only). */
export function scaledRamp(figure: RampFigure, factor: number): RampFigure {
  return { ...figure, maxRps: figure.maxRps * factor, roundMaxRps: ((figure.roundMaxRps as number[] | undefined) ?? [figure.maxRps]).map((rps) => rps * factor) };
}
