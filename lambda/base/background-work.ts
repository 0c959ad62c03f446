/**
 * Work that must finish before the runtime may stop (row writes after the
 * response has gone out). Lambda awaits `drain()` at the end of each invocation;
 * the local server awaits it on shutdown.
 */
export class BackgroundWork {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly parent?: BackgroundWork) {}

  add(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    this.parent?.add(tracked);
  }

  /**
   * One request's own work, also counted in this (the process's) tracker: an
   * invocation waits for its own rows, the server's shutdown for everyone's.
   */
  scope(): BackgroundWork {
    return new BackgroundWork(this);
  }

  get size(): number {
    return this.pending.size;
  }

  async drain(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }
}
