/**
 * Work that must finish before the runtime may stop (row writes after the
 * response has gone out). Lambda awaits `drain()` at the end of each invocation;
 * the local server awaits it on shutdown.
 */
export class BackgroundWork {
  private readonly pending = new Set<Promise<unknown>>();

  add(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  get size(): number {
    return this.pending.size;
  }

  async drain(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }
}
