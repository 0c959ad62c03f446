import { formatDateTime, formatUsd } from '../../format';
import type { Budget, BudgetPeriod } from '../../types';

/** From this share of the limit on, a budget is shown as a warning (and on the Overview's banner). */
export const WARN_SHARE = 0.8;

export const PERIOD_LABELS: Record<BudgetPeriod, string> = { day: 'per day', month: 'per month', total: 'in total' };

export function budgetShare(budget: Budget): number {
  return budget.limit_usd > 0 ? budget.spent_usd / budget.limit_usd : 0;
}

export type BudgetLevel = 'ok' | 'warn' | 'over';

export function budgetLevel(budget: Budget): BudgetLevel {
  const share = budgetShare(budget);
  return share >= 1 ? 'over' : share >= WARN_SHARE ? 'warn' : 'ok';
}

export function resetText(budget: Budget): string {
  return budget.resets_at ? `resets ${formatDateTime(budget.resets_at)}` : 'never resets';
}

/** Spent against the limit, as a bar and in words: amounts, period and when it resets. */
export function BudgetBar({ budget, testId, label }: { budget: Budget; testId: string; label: string }) {
  const share = budgetShare(budget);
  const level = budgetLevel(budget);
  const amounts = `${formatUsd(budget.spent_usd)} of ${formatUsd(budget.limit_usd)}`;
  return (
    <div class={`budget budget-${level}`} data-testid={testId} data-level={level}>
      <div
        class="budget-track"
        role="meter"
        aria-label={`${label}: ${amounts} ${PERIOD_LABELS[budget.period]}`}
        aria-valuemin={0}
        aria-valuemax={budget.limit_usd}
        aria-valuenow={Math.min(budget.spent_usd, budget.limit_usd)}
      >
        <div class="budget-fill" style={{ width: `${Math.min(100, share * 100).toFixed(1)}%` }} />
      </div>
      <div class="budget-text">
        <span class="budget-amounts" data-testid={`${testId}-amounts`}>
          {amounts}
        </span>{' '}
        <span data-testid={`${testId}-period`}>{PERIOD_LABELS[budget.period]}</span>
        <span class="muted" data-testid={`${testId}-reset`}>
          {' '}
          ·{' '}
          {level === 'over'
            ? `used up: requests are refused until ${budget.resets_at ? `it ${resetText(budget)}` : 'the limit is raised'}`
            : resetText(budget)}
        </span>
      </div>
    </div>
  );
}
