import type { AccountPrice } from './account-price';

/** An account's own prices, one per model id or pattern. */
export interface AccountPriceStore {
  list(accountId: string): Promise<AccountPrice[]>;
  /** Sets the price of `price.model`, replacing the one it had. */
  put(accountId: string, price: AccountPrice): Promise<void>;
  /** Whether there was a price to delete. */
  delete(accountId: string, model: string): Promise<boolean>;
}
