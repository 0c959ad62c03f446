import type { Usage } from '../providers/usage';
import { ACCOUNT_PRICE_SOURCE, type Cost, type PriceContext, type PriceTable } from '../pricing/price-table';
import { costPico, picoPerToken, picoToNanos, type ModelRates, type Rate } from '../pricing/rates';
import { findAccountPrice, type AccountPrice, type TokenRates } from './account-price';

/** What pricing a request needs: whether its model has a price, and what its usage cost. */
export type Prices = Pick<PriceTable, 'cost' | 'has'>;

const flat = (usdPerMillion: number | undefined): Rate | undefined =>
  usdPerMillion === undefined ? undefined : { base: picoPerToken(usdPerMillion), tiers: [] };

function modelRates(rates: TokenRates): ModelRates {
  return {
    input: flat(rates.input),
    output: flat(rates.output),
    cacheRead: flat(rates.cache_read),
    cacheWrite: flat(rates.cache_write),
  };
}

/**
 * The prices one account's requests are charged at: its own prices first, for the models they
 * cover (they override the built-in data and `PRICING_FILE` for this account), the table's for
 * every other model. A price "as" another model is that model's built-in price, looked up with the
 * provider that served the request; its tool calls are charged as that model's are. An account's
 * own token rates charge no tool calls.
 */
export class PricedForAccount implements Prices {
  constructor(
    private readonly table: Prices,
    private readonly prices: readonly AccountPrice[],
  ) {}

  has(provider: string, model: string): boolean {
    const own = findAccountPrice(this.prices, model);
    if (!own) return this.table.has(provider, model);
    return own.priced_as === undefined || this.table.has(provider, own.priced_as);
  }

  cost(model: string | undefined, usage: Usage, context: PriceContext): Cost {
    const own = model === undefined ? undefined : findAccountPrice(this.prices, model);
    if (!own) return this.table.cost(model, usage, context);
    if (own.priced_as !== undefined) {
      const as = this.table.cost(own.priced_as, usage, context);
      return as.priced ? { ...as, source: ACCOUNT_PRICE_SOURCE } : as;
    }
    return { nanos: picoToNanos(costPico(modelRates(own.rates), usage)), priced: true, source: ACCOUNT_PRICE_SOURCE };
  }
}

/** The account's view of the prices: the table itself when the account set none. */
export function pricesForAccount(table: Prices, prices: readonly AccountPrice[]): Prices {
  return prices.length ? new PricedForAccount(table, prices) : table;
}
