import { exceededMessage, isExhausted, tightest, unpriceableMessage } from '../budgets/budget';
import { budgetHeaders } from '../budgets/remaining-header';
import { BudgetExceededError, StoreUnavailableError, UnpricedModelError } from '../base/errors';
import type { Deps } from '../wiring/deps';
import { pricesForAccount } from '../account-prices/priced-for-account';
import { budgetNeedingPrice, requirePriced } from './priced-under-budget';
import type { Budgeted, Identified, Routed, Validated } from './state';
import type { Step } from './step';

/**
 * Step 7: spend limits, before anything is sent upstream or served from the cache: a
 * token or requester whose budget is used up for its period gets a 402 in the
 * endpoint's own error shape, and the refusal is logged as a row (pipeline.ts). So does a request under a
 * budget whose model has no price, neither the account's own nor a built-in one, and one whose body
 * names no model at all (an upload): either would spend nothing against the budget. The spend and the account's prices were read with the token (no
 * store call of their own); a failed read fails closed.
 */
export function enforceBudget(deps: Pick<Deps, 'prices'>): Step<Routed & Identified & Validated, Budgeted> {
  return {
    name: 'budget',
    async run(state, reads) {
      const [budgets, accountPrices] = await Promise.all([reads.budgets, reads.accountPrices]).catch(
        (error: unknown) => {
          throw new StoreUnavailableError(error);
        },
      );
      const prices = pricesForAccount(deps.prices, accountPrices);
      const exhausted = tightest(budgets.filter(isExhausted));
      if (exhausted) {
        throw new BudgetExceededError(exceededMessage(exhausted), budgetHeaders(budgets));
      }
      const model = state.pathModel ?? state.body?.model;
      if (typeof model === 'string') {
        requirePriced(budgets, prices, { provider: state.provider, endpoint: state.endpoint, model });
      } else if (state.request.body.length > 0) {
        // A body that names no model can't be priced (a request without one, a GET of a file or batch, generates nothing to pay for).
        const binding = budgetNeedingPrice(budgets, state.endpoint);
        if (binding) {
          const message = unpriceableMessage(state.request.headers['content-type'], binding);
          throw new UnpricedModelError(message, budgetHeaders(budgets));
        }
      }
      return { budgets, prices };
    },
  };
}
