/**
 * Budget periods are UTC calendar periods: a `day` budget resets at 00:00 UTC,
 * a `month` budget at 00:00 UTC on the 1st, a `total` budget never.
 */
export const BUDGET_PERIODS = ['day', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export function isBudgetPeriod(value: unknown): value is BudgetPeriod {
  return typeof value === 'string' && (BUDGET_PERIODS as readonly string[]).includes(value);
}

/** `YYYY-MM` of the UTC month `at` falls in: the month counter's key. */
export function monthOf(at: number): string {
  return new Date(at).toISOString().slice(0, 7);
}

/** `YYYY-MM-DD` of the UTC day `at` falls in: the day counter's key. */
export function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Epoch ms of the first instant of the next UTC month. */
export function nextMonthStart(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** When the period containing `at` ends and a fresh one starts; undefined for `total`. */
export function resetsAt(period: BudgetPeriod, at: number): number | undefined {
  if (period === 'total') return undefined;
  if (period === 'month') return nextMonthStart(at);
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
}

/** Epoch ms when the period containing `at` started; undefined for `total`, which has no start. */
export function periodStart(period: BudgetPeriod, at: number): number | undefined {
  if (period === 'total') return undefined;
  const date = new Date(at);
  if (period === 'month') return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}
