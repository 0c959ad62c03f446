/** Small statistics helpers; every figure is in milliseconds unless its name says otherwise. */

export interface Percentiles {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
function rank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    p50: rank(sorted, 50),
    p95: rank(sorted, 95),
    p99: rank(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentiles(values).p50;
}

/** `a - b` per percentile: what a contender adds over its baseline. */
export function added(a: Percentiles, b: Percentiles): Pick<Percentiles, 'p50' | 'p95' | 'p99'> {
  return { p50: a.p50 - b.p50, p95: a.p95 - b.p95, p99: a.p99 - b.p99 };
}

export const round = (value: number, digits = 2): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

/** "1.23" with a fixed number of decimals, or "–" for a missing figure. */
export function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/** "×1.8": a figure as a multiple of its baseline. */
export function ratio(value: number | undefined, baseline: number | undefined): string {
  if (value === undefined || baseline === undefined || !Number.isFinite(value) || !Number.isFinite(baseline) || baseline <= 0) return '–';
  const r = value / baseline;
  // Two significant digits below 0.1, so a contender at 3 % of its baseline doesn't read as ×0.0.
  return `×${r >= 10 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(1) : String(Number(r.toPrecision(2)))}`;
}
