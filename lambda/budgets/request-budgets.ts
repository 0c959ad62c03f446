import type { BudgetStatus } from './budget';
import type { TokenBudgetHints } from './budget-hints';
import type { GateVerdict, PresentedToken } from '../auth/ports';
import type { BudgetStore } from './ports';
import { quiet } from '../quiet';

/**
 * The budgets one proxied request is held to, with their spend, read fresh (limits are exact).
 * A requester budget spans its account's tokens, so a request naming a requester reads that
 * requester's budget beside the gate call. The token's own budget is read only when its gate
 * says there is one: beside the gate when this instance has seen that before, after it otherwise.
 */
export function requestBudgets(
  deps: { budgets: BudgetStore; budgetHints: TokenBudgetHints },
  token: PresentedToken,
  requester: string | undefined,
  gate: Promise<GateVerdict>,
  now: number,
): Promise<BudgetStatus[]> {
  const { accountId, tokenId } = token;
  const tokenRead = () => deps.budgets.statusOf(accountId, { kind: 'token', tokenId }, now);
  const early = deps.budgetHints.expects(tokenId) ? quiet(tokenRead()) : undefined;
  const requesterRead = requester ? quiet(deps.budgets.statusOf(accountId, { kind: 'requester', requester }, now)) : undefined;
  return gate.then(async (verdict) => {
    const hasTokenBudget = verdict.kind !== 'refused' && verdict.tokenBudget;
    if (verdict.kind !== 'refused') deps.budgetHints.note(tokenId, hasTokenBudget);
    const statuses = await Promise.all([hasTokenBudget ? (early ?? tokenRead()) : undefined, requesterRead]);
    return statuses.filter((status): status is BudgetStatus => status !== undefined);
  });
}
