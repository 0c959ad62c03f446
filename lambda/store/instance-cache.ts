/**
 * Values read from the store and kept by one instance for a short while, so a warm request reads
 * none of them again: a change made through another instance (another Lambda instance, another
 * local server on the same store) reaches this one within `ttlMs`; one made through this instance
 * applies at once (`change`). Past `maxEntries` ids the cache starts again empty.
 */
export class InstanceCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  /** Bumped by every change, so a read that started before a change can't keep the old value. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    /** Which values are worth keeping: one not kept is read again by the next request. */
    private readonly keeps: (value: V) => boolean = () => true,
  ) {}

  /** The value kept for `id`, or what `load` reads (then kept, unless a change came meanwhile). */
  read(id: string, load: () => Promise<V>): Promise<V> {
    const cached = this.entries.get(id);
    if (cached && cached.until > this.now()) return Promise.resolve(cached.value);
    const generation = this.generations.get(id) ?? 0;
    return load().then((value) => {
      if (this.keeps(value) && (this.generations.get(id) ?? 0) === generation) {
        if (this.entries.size >= this.maxEntries) this.entries.clear();
        this.entries.set(id, { value, until: this.now() + this.ttlMs });
      } else this.entries.delete(id);
      return value;
    });
  }

  /** Runs a change of `id`'s value in the store, forgetting what was kept before and after it. */
  async change<T>(id: string, write: () => Promise<T>): Promise<T> {
    this.forget(id);
    try {
      return await write();
    } finally {
      this.forget(id);
    }
  }

  private forget(id: string): void {
    this.entries.delete(id);
    this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
  }
}
