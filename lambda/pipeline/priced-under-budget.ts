import { tightest, unpricedMessage, type BudgetStatus } from '../budgets/budget';
import { budgetHeaders } from '../budgets/remaining-header';
import { UnpricedModelError } from '../base/errors';
import type { Prices } from '../account-prices/priced-for-account';
import type { Provider } from '../providers/registry';
import type { Endpoint } from '../providers/types';

/**
 * The budget a call must be priced under: the tightest that applies, when the call's endpoint bills
 * by tokens. Spend on such a call that has no price could not be counted against it; an endpoint
 * that bills otherwise needs no price. Undefined when no budget asks for one.
 */
export function budgetNeedingPrice(budgets: BudgetStatus[], endpoint: Endpoint): BudgetStatus | undefined {
  return endpoint.dialect.billing === 'tokens' ? tightest(budgets) : undefined;
}

/**
 * The pricing rule of a budget, for the request's model and each fallback's alike: under a budget
 * that needs a price, `model` must have one (the account's own or a built-in one), or the call is
 * refused before anything is sent. `whose` begins the refusal (a fallback's says so).
 */
export function requirePriced(
  budgets: BudgetStatus[],
  prices: Prices,
  call: { provider: Provider; endpoint: Endpoint; model: string },
  whose = '',
): void {
  const binding = budgetNeedingPrice(budgets, call.endpoint);
  if (binding && !prices.has(call.provider.id, call.model))
    throw new UnpricedModelError(`${whose}${unpricedMessage(call.model, binding)}`, budgetHeaders(budgets));
}
