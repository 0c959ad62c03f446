/**
 * Failed authentications, counted per source address on this instance (docs/operations.md,
 * "Failed sign-ins"), for two defences:
 *
 * - The throttle: an address may have `perMinute` credentials checked and found wrong per minute
 *   (at once, then one every 60/`perMinute` s). Each distinct credential being checked counts
 *   against it until its check is over, so guesses sent in parallel are limited as surely as
 *   guesses sent in turn, while one client sending many requests at once with its one credential
 *   counts once. Past it, the address's next credentials are refused at once with 429, unchecked:
 *   refusing costs nothing, so a flood of guesses holds no Lambda invocation, and guessing is
 *   limited, not just slowed.
 * - The hold (the local server only): once an address keeps failing, its failed answers wait a
 *   little. In Lambda a held answer would hold an invocation, so the hold is off there.
 *
 * A correct credential is never held, and frees its check at once. Once it has passed, it is not
 * counted nor refused again (while it keeps passing): many callers behind one address (a NAT, an
 * app serving its users with their own tokens) each with its own credential use none of that
 * address's allowance, which only guesses spend. Only their very first uses, if more than the
 * allowance are in flight at once from one address, can be refused (docs/operations.md).
 *
 * Memory is bounded: at most `MAX_SOURCES` addresses are remembered (the least recently failing
 * is forgotten first), and an address forgets its failures once it has been quiet for `WINDOW_MS`;
 * at most `MAX_PASSED` credentials are remembered as passed (hashes, the least recently used
 * forgotten first).
 */

import { SignInThrottledError } from '../base/errors';
import { hashSecret } from './proxy-token';

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
/** Credentials remembered as having passed their check. */
export const MAX_PASSED = 4_096;

/** The message of the log line each failure writes: the CloudWatch metric filter counts it. */
export const FAILED_SIGN_IN_MESSAGE = 'authentication failed';

/** Wrong credentials an address may have checked per minute by default (`FAILED_SIGN_INS_PER_MINUTE`; 0 turns the throttle off). */
export const CHECKS_PER_MINUTE = 10;

interface SourceFailures {
  failures: number;
  lastAt: number;
  /** Wrong credentials it may still have checked, as of `allowanceAt`; refills at `perMinute` a minute. */
  allowance: number;
  allowanceAt: number;
  /** Its credential checks in progress, by credential (a hash of it): each distinct one counts once. */
  checking: Map<string, number>;
}

/**
 * A credential check let through: `done` when it is over, with whether the credential passed (a
 * failure is also counted with `failed`).
 */
export interface SignInCheck {
  done(passed?: boolean): void;
}

export class FailedSignIns {
  private readonly sources = new Map<string, SourceFailures>();
  /** Hashes of credentials that passed their last check, least recently used first. */
  private readonly passed = new Map<string, true>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxDelayMs = MAX_DELAY_MS,
    private readonly perMinute = CHECKS_PER_MINUTE,
  ) {}

  /**
   * Before a credential from `source` is checked: the check, or the seconds until the address may
   * have one checked again when it has used up its allowance.
   */
  admit(source: string, credential: string): SignInCheck | { retryAfterSeconds: number } {
    if (this.perMinute === 0) return NO_CHECK;
    const now = this.now();
    const known = this.sources.get(source);
    const key = hashSecret(credential);
    if (this.passed.has(key)) return { done: (passed) => this.notePassed(key, passed === true) };
    if (known && !known.checking.has(key)) {
      const left = this.allowanceOf(known, now) - known.checking.size;
      if (left < 1) return { retryAfterSeconds: Math.max(1, Math.ceil(((1 - left) * 60) / this.perMinute)) };
    }
    const entry = known ?? this.remember(source, this.fresh(now));
    entry.checking.set(key, (entry.checking.get(key) ?? 0) + 1);
    let open = true;
    return {
      done: (passed) => {
        if (!open) return;
        open = false;
        const left = (entry.checking.get(key) ?? 1) - 1;
        if (left > 0) entry.checking.set(key, left);
        else entry.checking.delete(key);
        if (passed) this.notePassed(key, true);
      },
    };
  }

  /** Remembers a credential that passed (most recently used last); forgets one that did not. */
  private notePassed(key: string, passed: boolean): void {
    this.passed.delete(key);
    if (!passed) return;
    this.passed.set(key, true);
    if (this.passed.size > MAX_PASSED) this.passed.delete(this.passed.keys().next().value!);
  }

  /** Counts a failure from `source`: how many it has made lately, and how long to hold this answer. */
  failed(source: string): { failures: number; delayMs: number } {
    const now = this.now();
    const known = this.sources.get(source);
    const failures = known && now - known.lastAt < WINDOW_MS ? known.failures + 1 : 1;
    // Changed in place: a check in progress holds this entry.
    const entry = known ?? this.fresh(now);
    Object.assign(entry, { failures, lastAt: now, allowance: this.allowanceOf(entry, now) - 1, allowanceAt: now });
    this.remember(source, entry);
    return { failures, delayMs: delayAfter(failures, this.maxDelayMs) };
  }

  private fresh(now: number): SourceFailures {
    return { failures: 0, lastAt: now, allowance: this.perMinute, allowanceAt: now, checking: new Map() };
  }

  private allowanceOf(entry: SourceFailures, now: number): number {
    return Math.min(this.perMinute, entry.allowance + ((now - entry.allowanceAt) * this.perMinute) / 60_000);
  }

  /** (Re-)inserted, so the map's order is least recently failing first; the oldest goes past `MAX_SOURCES`. */
  private remember(source: string, entry: SourceFailures): SourceFailures {
    this.sources.delete(source);
    this.sources.set(source, entry);
    if (this.sources.size > MAX_SOURCES) this.sources.delete(this.sources.keys().next().value!);
    return entry;
  }

  /** Sources remembered. */
  get size(): number {
    return this.sources.size;
  }
}

/** The check of `credential` from `source`, or a `SignInThrottledError` (429) when the address has used up its allowance. */
export function admitSignIn(signIns: FailedSignIns, source: string | undefined, credential: string): SignInCheck {
  const admitted = signIns.admit(source ?? 'unknown', credential);
  if ('retryAfterSeconds' in admitted) throw new SignInThrottledError(admitted.retryAfterSeconds);
  return admitted;
}

const NO_CHECK: SignInCheck = { done: () => undefined };

export function delayAfter(failures: number, maxDelayMs = MAX_DELAY_MS): number {
  if (failures <= FREE_FAILURES) return 0;
  return Math.min(maxDelayMs, FIRST_DELAY_MS * 2 ** Math.min(failures - FREE_FAILURES - 1, 16));
}
