/**
 * Failed authentications, counted per source address on this instance, and the short delay a
 * source's failed answers are held for once it keeps failing (docs/operations.md, "Failed
 * sign-ins"). Only failures wait: a correct credential from the same address is answered at once,
 * so guessing is slowed and the real key is never locked out.
 *
 * Memory is bounded: at most `MAX_SOURCES` addresses are remembered (the least recently failing
 * is forgotten first), and an address forgets its failures once it has been quiet for `WINDOW_MS`.
 */

/** Failures a source may make before its failed answers are held. */
export const FREE_FAILURES = 5;
/**
 * The first held answer waits this long; each further failure doubles it, up to the longest hold
 * (`MAX_DELAY_MS` unless `FAILED_SIGN_IN_MAX_DELAY_MS` sets another; 0 holds nothing).
 */
export const FIRST_DELAY_MS = 100;
export const MAX_DELAY_MS = 2_000;
/** A source quiet for this long starts again from zero. */
export const WINDOW_MS = 5 * 60_000;
export const MAX_SOURCES = 10_000;

/** The message of the log line each failure writes: the CloudWatch metric filter counts it. */
export const FAILED_SIGN_IN_MESSAGE = 'authentication failed';

interface SourceFailures {
  failures: number;
  lastAt: number;
}

export class FailedSignIns {
  private readonly sources = new Map<string, SourceFailures>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxDelayMs = MAX_DELAY_MS,
  ) {}

  /** Counts a failure from `source`: how many it has made lately, and how long to hold this answer. */
  failed(source: string): { failures: number; delayMs: number } {
    const now = this.now();
    const known = this.sources.get(source);
    const failures = known && now - known.lastAt < WINDOW_MS ? known.failures + 1 : 1;
    // Re-inserted, so the map's order is least recently failing first.
    this.sources.delete(source);
    this.sources.set(source, { failures, lastAt: now });
    if (this.sources.size > MAX_SOURCES) this.sources.delete(this.sources.keys().next().value!);
    return { failures, delayMs: delayAfter(failures, this.maxDelayMs) };
  }

  /** Sources remembered. */
  get size(): number {
    return this.sources.size;
  }
}

export function delayAfter(failures: number, maxDelayMs = MAX_DELAY_MS): number {
  if (failures <= FREE_FAILURES) return 0;
  return Math.min(maxDelayMs, FIRST_DELAY_MS * 2 ** Math.min(failures - FREE_FAILURES - 1, 16));
}
