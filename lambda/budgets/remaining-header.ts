import { formatUsd, remainingNanos, tightest, type BudgetStatus } from './budget';

/** `x-proxy-budget-remaining-usd`: what is left of the stricter budget that applies, in dollars. */
export function budgetHeaders(statuses: readonly BudgetStatus[] | undefined): Record<string, string> {
  const tightestStatus = statuses && tightest(statuses);
  return tightestStatus ? { 'x-proxy-budget-remaining-usd': formatUsd(remainingNanos(tightestStatus)) } : {};
}
