import { InstanceCache } from '../store/instance-cache';
import type { AccountPrice } from './account-price';
import type { AccountPriceStore, PutPriceOutcome } from './ports';

/**
 * How long an instance keeps an account's prices: a change made through another instance (another
 * Lambda instance, another local server on the same store) reaches this one within this time; one
 * made through this instance applies at once (docs/usage-and-pricing.md, "Account prices").
 */
export const ACCOUNT_PRICE_CACHE_MS = 30_000;
const MAX_ACCOUNTS = 1_000;

/**
 * The account prices, each account's list kept per instance for a short while, so a warm proxied
 * request reads none before forwarding beyond its token gate; a cold one reads the list beside the
 * gate, in the same round trip. An empty list is kept too: most accounts have none.
 */
export class CachedAccountPrices implements AccountPriceStore {
  private readonly cache: InstanceCache<AccountPrice[]>;

  constructor(
    private readonly store: AccountPriceStore,
    now: () => number,
    ttlMs = ACCOUNT_PRICE_CACHE_MS,
  ) {
    this.cache = new InstanceCache(now, ttlMs, MAX_ACCOUNTS);
  }

  list(accountId: string): Promise<AccountPrice[]> {
    return this.cache.read(accountId, () => this.store.list(accountId));
  }

  put(accountId: string, price: AccountPrice): Promise<PutPriceOutcome> {
    return this.cache.change(accountId, () => this.store.put(accountId, price));
  }

  delete(accountId: string, model: string): Promise<boolean> {
    return this.cache.change(accountId, () => this.store.delete(accountId, model));
  }
}
