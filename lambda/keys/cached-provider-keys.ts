import type { ProviderId } from '../providers/registry';
import type { ProviderKeyStore, StoredProviderKey } from './ports';

/**
 * How long an instance keeps a stored provider key's ciphertext by default (`PROVIDER_KEY_CACHE_SECONDS`):
 * a change made through another instance — another Lambda instance, or another local server on the
 * same store — reaches this one within this time; one made through this instance applies at once.
 * Only keys found are kept: a key saved after a "no key" answer works at once (SECURITY.md, "Keys").
 */
export const PROVIDER_KEY_CACHE_MS = 30_000;
const MAX_ENTRIES = 1_000;

/**
 * The stored provider keys, with each one read kept per instance for a short while, so a warm
 * proxied request needs no read before forwarding beyond its token gate. What is kept is the
 * ciphertext as stored; the key is opened per request, as before.
 */
export class CachedProviderKeys implements ProviderKeyStore {
  private readonly entries = new Map<string, { key: StoredProviderKey; until: number }>();
  /** Bumped by every change, so a read that started before a change can't keep the old key. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly store: ProviderKeyStore,
    private readonly now: () => number,
    private readonly ttlMs = PROVIDER_KEY_CACHE_MS,
  ) {}

  get(accountId: string, provider: ProviderId): Promise<StoredProviderKey | undefined> {
    const id = `${accountId}\u0000${provider}`;
    const cached = this.entries.get(id);
    if (cached && cached.until > this.now()) return Promise.resolve(cached.key);
    const generation = this.generations.get(id) ?? 0;
    return this.store.get(accountId, provider).then((key) => {
      if (key && (this.generations.get(id) ?? 0) === generation) {
        if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
        this.entries.set(id, { key, until: this.now() + this.ttlMs });
      } else this.entries.delete(id);
      return key;
    });
  }

  async put(accountId: string, key: StoredProviderKey): Promise<void> {
    this.forget(accountId, key.provider);
    await this.store.put(accountId, key);
    this.forget(accountId, key.provider);
  }

  async delete(accountId: string, provider: ProviderId): Promise<boolean> {
    this.forget(accountId, provider);
    const deleted = await this.store.delete(accountId, provider);
    this.forget(accountId, provider);
    return deleted;
  }

  list(accountId: string): Promise<StoredProviderKey[]> {
    return this.store.list(accountId);
  }

  private forget(accountId: string, provider: ProviderId): void {
    const id = `${accountId}\u0000${provider}`;
    this.entries.delete(id);
    this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
  }
}
