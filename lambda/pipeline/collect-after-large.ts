/** A body at least this large leaves copies worth a collection once its request has ended. */
export const LARGE_BODY_BYTES = 1024 * 1024;

/**
 * A full garbage collection after a request with a large body, once no other request is in flight
 * in the process. The body's copies (its bytes, its text, the parsed request) are larger than V8
 * keeps in its young generation, so they stay in the old one until a major collection, which V8
 * starts only when the heap has grown well past them: the next large request would then add its
 * own copies to those still held, and the instance's peak memory with them (docs/deploy.md,
 * "Memory"). Collecting as the request ends, with its answer sent, costs its instance a few
 * milliseconds instead. Lambda starts Node with `--expose-gc`; without it (the local server)
 * nothing is collected. With other requests in flight (the local server, managed instances) the
 * collection would pause them, so it waits for an idle moment.
 */
export class CollectAfterLarge {
  private inFlight = 0;
  /** A large request ended while others were in flight: the next idle moment collects. */
  private owed = false;

  constructor(
    private readonly collect: (() => void) | undefined = (globalThis as { gc?: () => void }).gc,
    private readonly thresholdBytes = LARGE_BODY_BYTES,
  ) {}

  started(): void {
    this.inFlight++;
  }

  /** `bodyBytes`: the ended request's body, 0 when it was never read. */
  ended(bodyBytes: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (bodyBytes >= this.thresholdBytes) this.owed = true;
    if (this.inFlight > 0 || !this.owed) return;
    this.owed = false;
    this.collect?.();
  }
}
