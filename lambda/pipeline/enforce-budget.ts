import { exceededMessage, isExhausted, tightest, unpricedMessage } from '../budgets/budget';
import { budgetHeaders } from '../budgets/remaining-header';
import { BudgetExceededError, StoreUnavailableError, UnpricedModelError } from '../errors';
import { recordUsage, type RecordDeps } from './record';
import type { Budgeted, Identified, Routed, Validated } from './state';
import type { Step } from './step';

/**
 * Step 7: spend limits, before anything is sent upstream or served from the cache: a
 * token or requester whose budget is used up for its period gets a 402 in the
 * endpoint's own error shape, and the refusal is logged as a row. So does a request under a
 * budget whose model has no price: it would spend nothing against the budget. The spend was
 * read with the token (no store call of its own); a failed read fails closed.
 */
export function enforceBudget(deps: RecordDeps): Step<Routed & Identified & Validated, Budgeted> {
  return {
    name: 'budget',
    async run(state, reads) {
      const budgets = await reads.budgets.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      const exhausted = tightest(budgets.filter(isExhausted));
      if (exhausted) {
        const message = exceededMessage(exhausted);
        recordUsage(deps, state, { status: 402, error: message });
        throw new BudgetExceededError(message, budgetHeaders(budgets));
      }
      const binding = tightest(budgets);
      const model = state.pathModel ?? state.body?.model;
      if (binding && typeof model === 'string' && state.endpoint.dialect.billing === 'tokens') {
        if (!deps.prices.has(state.provider.id, model)) {
          const message = unpricedMessage(model, binding);
          recordUsage(deps, state, { status: 402, error: message });
          throw new UnpricedModelError(message, budgetHeaders(budgets));
        }
      }
      return { budgets };
    },
  };
}
