import { exceededMessage, isExhausted, tightest } from '../budgets/budget';
import { budgetHeaders } from '../budgets/remaining-header';
import { BudgetExceededError, StoreUnavailableError } from '../errors';
import type { Budgeted, Identified, Routed, Validated } from './state';
import type { Step } from './step';

/**
 * Step 7: spend limits, before anything is sent upstream or served from the cache: a
 * token or requester whose budget is used up for its period gets a 402 in the
 * endpoint's own error shape, and the refusal is logged as a row (pipeline.ts). The spend was
 * read with the token (no store call of its own); a failed read fails closed.
 */
export function enforceBudget(): Step<Routed & Identified & Validated, Budgeted> {
  return {
    name: 'budget',
    async run(_state, reads) {
      const budgets = await reads.budgets.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      const exhausted = tightest(budgets.filter(isExhausted));
      if (!exhausted) return { budgets };
      throw new BudgetExceededError(exceededMessage(exhausted), budgetHeaders(budgets));
    },
  };
}
