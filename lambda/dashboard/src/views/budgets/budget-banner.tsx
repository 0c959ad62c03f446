import { useApi } from '../../api-context';
import { formatUsd } from '../../format';
import { hrefFor } from '../../router';
import type { Budget, TagBudget } from '../../types';
import { useAsync } from '../../use-async';
import { budgetLevel, budgetShare, PERIOD_LABELS, resetText } from './budget-bar';

interface Named {
  label: string;
  budget: Budget;
}

/** Budgets past 80 % of their limit, tokens, requesters and tag values alike; most used first. */
function nearLimit(
  tokens: Array<{ name: string; revoked_at?: string; budget?: Budget | null }>,
  requesters: Array<Budget & { requester: string }>,
  tags: TagBudget[],
): Named[] {
  const named: Named[] = [
    ...tokens
      .filter((t) => t.budget && !t.revoked_at)
      .map((t) => ({ label: `Token “${t.name || '(unnamed)'}”`, budget: t.budget! })),
    ...requesters.map((r) => ({ label: `Requester “${r.requester}”`, budget: r })),
    ...tags.map((t) => ({ label: `Tag ${t.key}=${t.value}`, budget: t })),
  ];
  return named
    .filter((n) => budgetLevel(n.budget) !== 'ok')
    .sort((a, b) => budgetShare(b.budget) - budgetShare(a.budget));
}

/** The Overview's warning: any budget past 80 % of its limit, with a link to manage it. */
export function BudgetBanner() {
  const api = useApi();
  const loaded = useAsync(() => Promise.all([api.tokens(), api.budgets()]), []);
  // A banner that fails to load stays out of the way: the pages it links to show their own errors.
  if (!loaded.data) return null;
  const [{ tokens }, { requesters, tags }] = loaded.data;
  const warnings = nearLimit(tokens, requesters, tags);
  if (warnings.length === 0) return null;
  return (
    <div class="notice notice-warn budget-banner" role="status" data-testid="budget-banner">
      <div>
        <strong>
          {warnings.length === 1 ? 'A budget is' : `${warnings.length} budgets are`} past 80 % of the limit.
        </strong>
        <ul class="budget-banner-list">
          {warnings.map(({ label, budget }) => (
            <li key={label} data-testid="budget-banner-item" data-level={budgetLevel(budget)}>
              {label}: {formatUsd(budget.spent_usd)} of {formatUsd(budget.limit_usd)} {PERIOD_LABELS[budget.period]} (
              {Math.floor(budgetShare(budget) * 100)} %)
              {budgetLevel(budget) === 'over' ? ', used up: requests are refused with 402' : ''}, {resetText(budget)}.
            </li>
          ))}
        </ul>
      </div>
      <a class="button button-small" href={hrefFor('tokens')} data-testid="budget-banner-manage">
        Manage budgets
      </a>
    </div>
  );
}
