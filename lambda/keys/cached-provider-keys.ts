import type { ProviderId } from '../providers/registry';
import { InstanceCache } from '../store/instance-cache';
import type { ProviderKeyStore, StoredProviderKey } from './ports';

/**
 * How long an instance keeps a stored provider key's ciphertext by default (`PROVIDER_KEY_CACHE_SECONDS`):
 * a change made through another instance — another Lambda instance, or another local server on the
 * same store — reaches this one within this time; one made through this instance applies at once.
 * Only keys found are kept: a key saved after a "no key" answer works at once (SECURITY.md, "Keys").
 */
export const PROVIDER_KEY_CACHE_MS = 30_000;
const MAX_ENTRIES = 1_000;

const keyId = (accountId: string, provider: ProviderId) => `${accountId}\u0000${provider}`;

/**
 * The stored provider keys, with each one read kept per instance for a short while, so a warm
 * proxied request needs no read before forwarding beyond its token gate. What is kept is the
 * ciphertext as stored; the key is opened per request, as before.
 */
export class CachedProviderKeys implements ProviderKeyStore {
  private readonly cache: InstanceCache<StoredProviderKey | undefined>;

  constructor(
    private readonly store: ProviderKeyStore,
    now: () => number,
    ttlMs = PROVIDER_KEY_CACHE_MS,
  ) {
    this.cache = new InstanceCache(now, ttlMs, MAX_ENTRIES, (key) => key !== undefined);
  }

  get(accountId: string, provider: ProviderId): Promise<StoredProviderKey | undefined> {
    return this.cache.read(keyId(accountId, provider), () => this.store.get(accountId, provider));
  }

  put(accountId: string, key: StoredProviderKey): Promise<void> {
    return this.cache.change(keyId(accountId, key.provider), () => this.store.put(accountId, key));
  }

  delete(accountId: string, provider: ProviderId): Promise<boolean> {
    return this.cache.change(keyId(accountId, provider), () => this.store.delete(accountId, provider));
  }

  list(accountId: string): Promise<StoredProviderKey[]> {
    return this.store.list(accountId);
  }
}
