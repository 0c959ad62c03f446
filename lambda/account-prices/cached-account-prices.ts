import type { AccountPrice } from './account-price';
import type { AccountPriceStore } from './ports';

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
  private readonly entries = new Map<string, { prices: AccountPrice[]; until: number }>();
  /** Bumped by every change, so a read that started before a change can't keep the old list. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly store: AccountPriceStore,
    private readonly now: () => number,
    private readonly ttlMs = ACCOUNT_PRICE_CACHE_MS,
  ) {}

  list(accountId: string): Promise<AccountPrice[]> {
    const cached = this.entries.get(accountId);
    if (cached && cached.until > this.now()) return Promise.resolve(cached.prices);
    const generation = this.generations.get(accountId) ?? 0;
    return this.store.list(accountId).then((prices) => {
      if ((this.generations.get(accountId) ?? 0) === generation) {
        if (this.entries.size >= MAX_ACCOUNTS) this.entries.clear();
        this.entries.set(accountId, { prices, until: this.now() + this.ttlMs });
      }
      return prices;
    });
  }

  async put(accountId: string, price: AccountPrice): Promise<void> {
    this.forget(accountId);
    await this.store.put(accountId, price);
    this.forget(accountId);
  }

  async delete(accountId: string, model: string): Promise<boolean> {
    this.forget(accountId);
    const deleted = await this.store.delete(accountId, model);
    this.forget(accountId);
    return deleted;
  }

  private forget(accountId: string): void {
    this.entries.delete(accountId);
    this.generations.set(accountId, (this.generations.get(accountId) ?? 0) + 1);
  }
}
