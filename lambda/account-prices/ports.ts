import type { AccountPrice } from './account-price';

/** What setting a price did: stored, or refused because the account already keeps `MAX_ACCOUNT_PRICES` others. */
export type PutPriceOutcome = 'stored' | 'full';

/** An account's own prices, one per model id or pattern. */
export interface AccountPriceStore {
  list(accountId: string): Promise<AccountPrice[]>;
  /**
   * Sets the price of `price.model`, replacing the one it had. A new model is refused (`full`) when
   * the account keeps `MAX_ACCOUNT_PRICES` already, checked in the same write, whatever other instances do.
   */
  put(accountId: string, price: AccountPrice): Promise<PutPriceOutcome>;
  /** Whether there was a price to delete. */
  delete(accountId: string, model: string): Promise<boolean>;
}
