/**
 * How long the proxy waits for its own store (docs/failure-modes.md, "Deadlines"). DynamoDB answers
 * in milliseconds; a store that stays silent for seconds is down or stalled, and waiting on it
 * longer only holds the caller (in Lambda, an invocation and a reserved-concurrency slot). The
 * bounds leave room for DynamoDB Local on a busy machine: a burst of a few hundred calls there
 * (tests, a load run) can keep one waiting for seconds, and a request refused then would be a
 * false outage.
 */

/** One attempt whose connection stays silent this long is given up (and retried on another connection). */
export const ATTEMPT_SILENCE_MS = 5_000;

/** One store call, its retries and their waits included, ends by this deadline: it throws `StoreDeadlineError`. */
export const CALL_DEADLINE_MS = 10_000;

/**
 * All of a proxied request's store work before forwarding (the token gate, budgets, stored key,
 * prices, the cache lookup, read side by side) shares this budget from the first read; past it the
 * request is refused with 503 and `Retry-After: 1`.
 */
export const PRE_FORWARD_BUDGET_MS = 10_000;

/** A store call, or a request's store work, that did not finish by its deadline: an outage (store-outage.ts). */
export class StoreDeadlineError extends Error {
  constructor(what: string, deadlineMs: number, cause?: unknown) {
    super(`${what} did not finish within ${deadlineMs} ms`, { cause });
    this.name = 'StoreDeadlineError';
  }
}

/** One deadline that several calls started together are held to (`sharedDeadline`). */
export interface SharedDeadline {
  /** `work`, or a `StoreDeadlineError` naming `what` once the shared deadline has passed. */
  bound<T>(work: Promise<T>, what: string): Promise<T>;
}

/**
 * One deadline, `ms` from now, for every call bound to it: one timer rather than one per call, since
 * they share a start and a budget. The timer runs only while some bound work is unsettled (work bound
 * after that gets what is left of the budget). The work itself goes on past the deadline, bounded by
 * its own call deadline; its later failure is ignored here (whoever started it handles it).
 */
export function sharedDeadline(ms: number): SharedDeadline {
  const end = Date.now() + ms;
  const unsettled = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;
  const expire = () => {
    timer = undefined;
    for (const fail of unsettled) fail();
    unsettled.clear();
  };
  return {
    bound<T>(work: Promise<T>, what: string): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const fail = () => reject(new StoreDeadlineError(what, ms));
        unsettled.add(fail);
        if (!timer) {
          timer = setTimeout(expire, Math.max(0, end - Date.now()));
          // A deadline never keeps a process (or a Lambda invocation) alive by itself.
          timer.unref();
        }
        const settle = () => {
          unsettled.delete(fail);
          if (unsettled.size === 0 && timer) {
            clearTimeout(timer);
            timer = undefined;
          }
        };
        work.finally(settle).then(resolve, reject);
      });
    },
  };
}
