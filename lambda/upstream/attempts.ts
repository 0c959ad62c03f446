import { ProxyError, UpstreamTimeoutError, UpstreamUnreachableError } from '../base/errors';
import { retryPolicies, withRetries } from '../base/retry';
import type { UpstreamResponse } from './call-upstream';
import { peekBody } from './peek-body';
import { retryAfterMs } from './retry-after';

/** Answers sent again to the same target, after a wait (docs/fallbacks.md). */
const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
/** Answers that move on to the next target without a retry: the same request cannot fit this model. */
const TOO_LONG_FOR_MODEL = /context_length_exceeded|maximum context length|prompt is too long|too many tokens/i;
/** A provider asking for a longer wait than this is not waited for: the next target answers, or its answer goes back. */
export const MAX_RETRY_WAIT_MS = 10_000;

/** One attempt as the row records it. */
export interface AttemptRecord {
  /** `<provider>/<model>` */
  target: string;
  /** The provider's status, or what happened instead: `reset`, `timeout`, `no-first-byte`. */
  status: number | 'reset' | 'timeout' | 'no-first-byte';
  duration_ms: number;
  /** The label of the stored key it sent (docs/fallbacks.md, "Key pools"); absent for the caller's own key or AWS signing. */
  key?: string;
}

/** The attempts behind a call that failed on every target, kept with its error for the row. */
const attemptsOfFailure = new WeakMap<object, readonly AttemptRecord[]>();

/** Notes the attempts behind an error thrown once every target failed (only when there was more than one). */
export function noteFailedAttempts(error: unknown, attempts: readonly AttemptRecord[]): void {
  if (attempts.length > 1 && typeof error === 'object' && error !== null) attemptsOfFailure.set(error, attempts);
}

/** The attempts noted with an error, for the row of the request it ended. */
export const failedAttemptsOf = (error: unknown): readonly AttemptRecord[] | undefined =>
  typeof error === 'object' && error !== null ? attemptsOfFailure.get(error) : undefined;

/** A target's pool of stored keys, as the loop sees it (keys/key-rotation.ts). */
export interface TargetKeys {
  /** The label of the key the last `send` used. */
  readonly lastLabel: string | undefined;
  /** The provider's status for that key: true when it was set aside and another key may be tried at once. */
  answered(status: number, retryAfterMs: number | undefined): boolean;
}

/** One target the loop may send to. */
export interface TargetCall {
  label: string;
  /** Sends the request once. */
  send(options: { timeoutMs: number; freshConnection: boolean }): Promise<UpstreamResponse>;
  /** Stored mode: the keys the target's attempts choose from. */
  keys?: TargetKeys;
}

export interface AttemptOptions {
  /** Primary first. */
  calls: readonly TargetCall[];
  /** Limit for one attempt's response headers. */
  headerTimeoutMs: number;
  /**
   * For a stream with a further target: the first byte of its body must come this many ms after the
   * attempt started, or the next target is tried (the silent one is not sent the request again).
   */
  firstByteMs?: number;
  /** `performance.now()` past which no further attempt starts (Lambda's time limit). */
  deadlineAt?: number;
  /** Every attempt made, appended as it ends. */
  attempts: AttemptRecord[];
}

/** Which target answered, and its answer (2xx, or the last target's error as the provider sent it). */
export interface Answered {
  response: UpstreamResponse;
  index: number;
}

/** The first byte of a stream took longer than the limit: the target stays silent, the next one answers. */
export class FirstByteTimeoutError extends UpstreamTimeoutError {}

/** A 429 or 5xx the same target may answer differently after a wait. */
class RetriableAnswer extends Error {
  constructor(
    readonly response: UpstreamResponse,
    readonly waitMs: number,
  ) {
    super(`upstream answered ${response.status}`);
  }
}

/** The key that got this answer was set aside and another is usable: the same target is tried again at once with it. */
class AnotherKey extends Error {}

/** Answers that set a pooled key aside (docs/fallbacks.md, "Key pools"). */
const SETS_KEY_ASIDE = new Set([401, 403, 429]);

/** An answer that sends the request on to the next target without a retry (the prompt does not fit this model). */
class MovesOn extends Error {
  constructor(readonly response: UpstreamResponse) {
    super(`upstream answered ${response.status}`);
  }
}

/** Failures after which the next target is tried: nothing reached the client, nothing was billed. */
function failsOver(error: unknown): boolean {
  return error instanceof UpstreamUnreachableError || error instanceof UpstreamTimeoutError;
}

/**
 * Sends the request to each target in turn until one answers: retries on the same target (429
 * honouring Retry-After, 5xx, a refused or at-once reset connection) through the one retry loop,
 * then the next target. A target that held the request in silence is never sent it again. The
 * last target's error answer goes back as the provider sent it; a client error (400 other than
 * a prompt too long for the model, 401, 403, 404, 422…) goes back at once from any target.
 */
export async function firstAnswer(options: AttemptOptions): Promise<Answered> {
  const { calls } = options;
  for (let index = 0; index < calls.length; index++) {
    const last = index === calls.length - 1;
    try {
      const response = await attemptTarget(options, calls[index], last);
      return { response, index };
    } catch (error) {
      const answer = error instanceof RetriableAnswer || error instanceof MovesOn ? error.response : undefined;
      if (answer && last) return { response: answer, index };
      if (answer) answer.abort();
      else if (last || !failsOver(error)) throw error;
    }
  }
  throw new Error('no target to send to');
}

/**
 * One target's attempts: the retry loop on one key, started again at once on another key of the
 * target's pool when the provider set the one it used aside (each key at most once per request).
 */
async function attemptTarget(options: AttemptOptions, call: TargetCall, last: boolean): Promise<UpstreamResponse> {
  for (;;) {
    try {
      return await attemptWithKey(options, call, last);
    } catch (error) {
      if (!(error instanceof AnotherKey)) throw error;
    }
  }
}

function attemptWithKey(options: AttemptOptions, call: TargetCall, last: boolean): Promise<UpstreamResponse> {
  let previous: UpstreamResponse | undefined;
  let staleBefore = false;
  const firstByteMs = last ? undefined : options.firstByteMs;
  const timeLeft = () => (options.deadlineAt === undefined ? Infinity : options.deadlineAt - performance.now());
  return withRetries(
    async () => {
      previous?.abort();
      previous = undefined;
      const started = performance.now();
      const record = (status: AttemptRecord['status']) => {
        const key = call.keys?.lastLabel;
        const duration_ms = Math.round(performance.now() - started);
        options.attempts.push({ target: call.label, status, duration_ms, ...(key === undefined ? {} : { key }) });
      };
      const timeoutMs = Math.max(1, Math.min(options.headerTimeoutMs, firstByteMs ?? Infinity, timeLeft()));
      let response: UpstreamResponse;
      try {
        response = await call.send({ timeoutMs, freshConnection: staleBefore });
      } catch (error) {
        if (error instanceof UpstreamUnreachableError) staleBefore = error.staleSocket;
        if (!(error instanceof ProxyError) || error.status !== 499) record(attemptStatus(error));
        if (error instanceof UpstreamTimeoutError && firstByteMs !== undefined && timeoutMs === firstByteMs)
          throw new FirstByteTimeoutError(firstByteMs);
        throw error;
      }
      const { status } = response;
      if (status >= 200 && status < 300) {
        if (firstByteMs !== undefined) await firstByte(response, firstByteMs - (performance.now() - started), record);
        record(status);
        call.keys?.answered(status, undefined);
        return response;
      }
      record(status);
      const retryAfter = retryAfterMs(response.headers['retry-after']);
      if (SETS_KEY_ASIDE.has(status) && call.keys?.answered(status, retryAfter) && timeLeft() > 0) {
        response.abort();
        throw new AnotherKey();
      }
      if (RETRIED_STATUSES.has(status)) {
        previous = response;
        throw new RetriableAnswer(response, retryAfter ?? 0);
      }
      if (last || status !== 400) return response;
      const peeked = await peekBody(response);
      if (TOO_LONG_FOR_MODEL.test(peeked.head)) throw new MovesOn(peeked.response);
      return peeked.response;
    },
    retryPolicies.upstreamAttempt(
      (error) =>
        error instanceof RetriableAnswer
          ? error.waitMs <= MAX_RETRY_WAIT_MS && error.waitMs < timeLeft()
          : error instanceof UpstreamUnreachableError && error.resendable && timeLeft() > 0,
      (error) =>
        error instanceof RetriableAnswer
          ? error.waitMs
          : error instanceof UpstreamUnreachableError && error.staleSocket
            ? 'at-once'
            : 0,
    ),
  );
}

function attemptStatus(error: unknown): AttemptRecord['status'] {
  if (error instanceof FirstByteTimeoutError) return 'no-first-byte';
  if (error instanceof UpstreamTimeoutError) return 'timeout';
  return 'reset';
}

/**
 * Waits for the body's first byte, and puts it back for the relay to read. None within the limit:
 * the call is stopped and the next target answers.
 */
function firstByte(
  response: UpstreamResponse,
  withinMs: number,
  record: (status: AttemptRecord['status']) => void,
): Promise<void> {
  const { body } = response;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => {
        body.off('data', onData);
        body.off('close', onClose);
        response.abort();
        record('no-first-byte');
        reject(new FirstByteTimeoutError(Math.round(withinMs)));
      },
      Math.max(0, withinMs),
    );
    const onData = (chunk: Buffer) => {
      clearTimeout(timer);
      body.off('close', onClose);
      body.pause();
      body.unshift(chunk);
      resolve();
    };
    // A body that ends before any byte is the relay's to report (an empty answer).
    const onClose = () => {
      clearTimeout(timer);
      body.off('data', onData);
      resolve();
    };
    body.once('data', onData);
    body.once('close', onClose);
  });
}
