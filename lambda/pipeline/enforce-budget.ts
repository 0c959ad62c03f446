import { exceededMessage, isExhausted, tightest } from '../budgets/budget';
import type { Deps } from '../deps';
import { BudgetExceededError, StoreUnavailableError } from '../errors';
import { proxyState, type Middleware } from './middy-types';
import { recordUsage } from './record';

/**
 * Spend limits, before anything is sent upstream or served from the cache: a
 * token or requester whose budget is used up for its period gets a 402 in the
 * endpoint's own error shape, and the refusal is logged as a row. The spend was
 * read with the token (no store call of its own); a failed read fails closed.
 */
export function enforceBudget(deps: Deps): Middleware {
  return {
    before: async function enforceBudget(request) {
      const state = proxyState(request.event);
      state.budgets = await state.lookups!.budgets.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      const exhausted = tightest(state.budgets.filter(isExhausted));
      if (!exhausted) return;
      const message = exceededMessage(exhausted);
      recordUsage(deps, state, { status: 402, error: message });
      throw new BudgetExceededError(message);
    },
  };
}
