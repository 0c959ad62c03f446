import { anotherUsable, chooseKey, type KeyHealth } from './key-health';
import type { OpenedKey } from './open-pool';
import type { KeyMark, KeyVersion } from './ports';

/** Where a key's mark goes once this instance applies it: the store, off the request's path. */
export type KeepMark = (key: KeyVersion, mark: KeyMark) => void;

/**
 * One target's pool of keys for one request (docs/fallbacks.md, "Key pools"): which key the next
 * attempt sends, and whether a key the provider set aside (429, 401, 403) leaves another to try at
 * once. Each key is set aside at most once per request, so the switches end with the pool.
 */
export class KeyRotation {
  private readonly setAside = new Set<string>();
  private used: OpenedKey | undefined;

  constructor(
    private readonly keys: readonly OpenedKey[],
    private readonly health: KeyHealth,
    private readonly accountId: string,
    private readonly now: () => number,
    private readonly keep: KeepMark,
  ) {}

  /** The key the next attempt sends. */
  next(): OpenedKey {
    this.used = chooseKey(this.marked(), this.setAside, this.now());
    return this.used;
  }

  /** The key the last attempt sent. */
  get last(): OpenedKey | undefined {
    return this.used;
  }

  /**
   * The provider's status for the last key sent: a 429, 401 or 403 marks it (here at once, in the
   * store soon after). True when another key is usable now, so the request goes there at once.
   */
  answered(status: number, retryAfterMs: number | undefined): boolean {
    const key = this.used;
    if (!key) return false;
    const mark = this.health.answered(this.accountId, key, status, retryAfterMs);
    if (!mark) return false;
    this.keep({ provider: key.provider, label: key.label, updatedAt: key.updatedAt }, mark);
    this.setAside.add(key.label);
    return anotherUsable(this.marked(), this.setAside, this.now());
  }

  private marked(): OpenedKey[] {
    return this.keys.map((key) => ({ ...key, mark: this.health.markOf(this.accountId, key) }));
  }
}
