import type { ProviderId } from '../providers/registry';
import { InstanceCache } from '../store/instance-cache';
import type { KeyMark, KeyVersion, ProviderKeyStore, StoredProviderKey } from './ports';

/**
 * How long an instance keeps a provider's stored keys by default (`PROVIDER_KEY_CACHE_SECONDS`):
 * a change made through another instance — another Lambda instance, or another local server on the
 * same store — reaches this one within this time, and so does a key's cool-down or failure another
 * instance noted; one made through this instance applies at once. Only pools with a key are kept:
 * a key saved after a "no key" answer works at once (SECURITY.md, "Keys").
 */
export const PROVIDER_KEY_CACHE_MS = 30_000;
const MAX_ENTRIES = 1_000;

const poolId = (accountId: string, provider: ProviderId) => `${accountId}\u0000${provider}`;

/**
 * The stored provider keys, each provider's pool read kept per instance for a short while, so a
 * warm proxied request needs no read before forwarding beyond its token gate. What is kept is the
 * ciphertext as stored; a key is opened per request, as before.
 */
export class CachedProviderKeys implements ProviderKeyStore {
  private readonly cache: InstanceCache<StoredProviderKey[]>;

  constructor(
    private readonly store: ProviderKeyStore,
    now: () => number,
    ttlMs = PROVIDER_KEY_CACHE_MS,
  ) {
    this.cache = new InstanceCache(now, ttlMs, MAX_ENTRIES, (pool) => pool.length > 0);
  }

  pool(accountId: string, provider: ProviderId): Promise<StoredProviderKey[]> {
    return this.cache.read(poolId(accountId, provider), () => this.store.pool(accountId, provider));
  }

  put(accountId: string, key: StoredProviderKey): Promise<void> {
    return this.cache.change(poolId(accountId, key.provider), () => this.store.put(accountId, key));
  }

  delete(accountId: string, provider: ProviderId, label: string): Promise<boolean> {
    return this.cache.change(poolId(accountId, provider), () => this.store.delete(accountId, provider, label));
  }

  list(accountId: string): Promise<StoredProviderKey[]> {
    return this.store.list(accountId);
  }

  /** Written through without forgetting the pool: this instance already applies its own marks (key-health.ts). */
  mark(accountId: string, key: KeyVersion, mark: KeyMark): Promise<void> {
    return this.store.mark(accountId, key, mark);
  }
}
