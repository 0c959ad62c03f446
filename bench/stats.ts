/** Statistics used by the run and the report; figures in milliseconds unless named otherwise. */

/** Nearest-rank percentile: the smallest sample with at least p % of the samples at or below it. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The middle value (the mean of the two middle ones for an even count), over finite values only. */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : Number.NaN;
}

/** Three significant decimals at most: results.json holds measurements, not float noise. */
export const round3 = (value: number): number => (Number.isFinite(value) ? Math.round(value * 1000) / 1000 : value);
