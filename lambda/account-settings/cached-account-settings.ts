import { InstanceCache } from '../store/instance-cache';
import type { AccountFailover } from './failover-settings';
import type { AccountSettingsStore } from './ports';

/**
 * How long an instance keeps an account's failover settings: a change made through another instance
 * reaches this one within this time; one made through this instance applies at once (docs/fallbacks.md).
 */
export const ACCOUNT_SETTINGS_CACHE_MS = 30_000;
const MAX_ACCOUNTS = 1_000;

/**
 * The settings kept per instance for a short while, like the account prices: a warm proxied request
 * reads none; a cold one reads them beside its token gate, in the same round trip.
 */
export class CachedAccountSettings implements AccountSettingsStore {
  private readonly cache: InstanceCache<AccountFailover>;

  constructor(
    private readonly store: AccountSettingsStore,
    now: () => number,
    ttlMs = ACCOUNT_SETTINGS_CACHE_MS,
  ) {
    this.cache = new InstanceCache(now, ttlMs, MAX_ACCOUNTS);
  }

  get(accountId: string): Promise<AccountFailover> {
    return this.cache.read(accountId, () => this.store.get(accountId));
  }

  update(accountId: string, edit: (current: AccountFailover) => AccountFailover) {
    return this.cache.change(accountId, () => this.store.update(accountId, edit));
  }
}
