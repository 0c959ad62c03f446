/**
 * The one retry loop of the code base. Each call site names its policy from
 * `retryPolicies` and says only which of its errors may be retried: the number
 * of attempts and the waits between them are decided here.
 */
export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  attempts: number;
  /** Whether this error leaves the operation safe to send again. */
  mayRetry(error: unknown): boolean;
  /** Wait before retry number `retry` (1 for the first retry) after `error`; 0 retries at once. */
  delayMs(retry: number, error?: unknown): number;
}

export type Sleep = (ms: number) => Promise<void>;

const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function withRetries<T>(
  operation: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  wait: Sleep = sleep,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (attempt >= policy.attempts || !policy.mayRetry(error)) throw error;
      const delay = policy.delayMs(attempt, error);
      if (delay > 0) await wait(delay);
    }
  }
}

export interface Backoff {
  /** The ceiling of the first retry's wait. */
  firstMs: number;
  /** Each further retry multiplies the ceiling by this. */
  factor: number;
  /** No wait's ceiling exceeds this. */
  capMs: number;
  /** Share of the ceiling always waited: 0 for full jitter; 0.5 keeps the retries spread over a known minimum time. */
  floorShare?: number;
}

/**
 * Jittered exponential backoff: the wait before retry `n` is drawn uniformly
 * from [floor × ceiling, ceiling), where ceiling = min(cap, first × factor^(n-1)).
 * Spreading the waits keeps many instances throttled at the same moment from
 * retrying in lockstep.
 */
export function jitteredBackoff(
  { firstMs, factor, capMs, floorShare = 0 }: Backoff,
  random: () => number = Math.random,
): (retry: number) => number {
  return (retry) => {
    const ceiling = Math.min(capMs, firstMs * factor ** (retry - 1));
    return ceiling * (floorShare + (1 - floorShare) * random());
  };
}

type MayRetry = (error: unknown) => boolean;

/** Backoffs by name, so tests can check each policy's bounds. */
export const backoffs = {
  /** As the AWS SDK does for DynamoDB: short, since the caller is waiting. */
  storeCall: { firstMs: 50, factor: 2, capMs: 1_000 },
  /** A BatchGet/BatchWrite's leftover keys or items: 40 ms doubling, as DynamoDB's guidance suggests. */
  unprocessedItems: { firstMs: 40, factor: 2, capMs: 1_000 },
  /**
   * A usage row, written after the response: no one waits on it, so half of
   * each wait is fixed and the retries always span 6 to 12 s of store outage
   * before the row is spooled.
   */
  rowWrite: { firstMs: 100, factor: 4, capMs: 5_000, floorShare: 0.5 },
  /**
   * A queued alert's next delivery attempt (docs/alerts.md): a receiver may be down for hours, so
   * the waits double from 30 s to SQS's longest message delay, 15 minutes; half of each is fixed.
   */
  alertDelivery: { firstMs: 30_000, factor: 2, capMs: 900_000, floorShare: 0.5 },
  /**
   * A provider's 429 or 5xx: the first retry after 0.5 to 1 s, the second 1.5 to 3 s after that, so
   * no three attempts at one target ever fall within 1.5 s (docs/fallbacks.md).
   */
  upstreamAttempt: { firstMs: 1_000, factor: 3, capMs: 3_000, floorShare: 0.5 },
  /**
   * How long a pooled key that answered 429 without `Retry-After` rests (docs/fallbacks.md, "Key
   * pools"): 5 to 10 s, doubling with each 429 in a row, at most 5 minutes.
   */
  keyCoolDown: { firstMs: 10_000, factor: 2, capMs: 300_000, floorShare: 0.5 },
} satisfies Record<string, Backoff>;

export const retryPolicies = {
  /**
   * One DynamoDB call (lambda/store/dynamodb/document-client.ts; the AWS SDK's
   * own retries are off). `mayRetry` is the store's: busy, failing or out of reach.
   */
  storeCall: (mayRetry: MayRetry): RetryPolicy => ({
    attempts: 3,
    mayRetry,
    delayMs: jitteredBackoff(backoffs.storeCall),
  }),
  /**
   * A BatchGet/BatchWrite: what it left unprocessed, or the whole call when it
   * failed, sent again up to 5 times after the first call (the only retries of a batch).
   */
  unprocessedItems: (mayRetry: MayRetry, attempts = 6): RetryPolicy => ({
    attempts,
    mayRetry,
    delayMs: jitteredBackoff(backoffs.unprocessedItems),
  }),
  /**
   * A conditional write that met another writer's change to what it was conditioned on: read again
   * and write again at once (no store is failing, so no wait helps), 5 attempts in all.
   */
  changedMeanwhile: (mayRetry: MayRetry): RetryPolicy => ({ attempts: 5, mayRetry, delayMs: () => 0 }),
  /** A usage row put: idempotent (keyed by the row's id), so every error is retried. */
  rowWrite: (): RetryPolicy => ({ attempts: 6, mayRetry: () => true, delayMs: jitteredBackoff(backoffs.rowWrite) }),
  /**
   * An alert sent to a webhook or the topic, one attempt per queued message (the SNS client's own
   * retries are off): 24 attempts, the last 2.4 to 4.8 hours after the first, only for errors that
   * may pass. `firstMs` shortens the first wait (ALERT_RETRY_FIRST_SECONDS; the others scale with it).
   */
  alertDelivery: (mayRetry: MayRetry, firstMs = backoffs.alertDelivery.firstMs): RetryPolicy => {
    const scale = firstMs / backoffs.alertDelivery.firstMs;
    return {
      attempts: 24,
      mayRetry,
      delayMs: jitteredBackoff({
        ...backoffs.alertDelivery,
        firstMs,
        capMs: Math.min(backoffs.alertDelivery.capMs, backoffs.alertDelivery.capMs * scale),
      }),
    };
  },
  /**
   * One provider target's attempts (upstream/attempts.ts): 3 in all. The wait is the jittered
   * backoff, or longer when the caller says so for that error (the provider's `Retry-After`), or
   * none for the first resend after a kept-alive socket the provider had closed while idle.
   */
  upstreamAttempt: (mayRetry: MayRetry, waitFor: (error: unknown) => number | 'at-once'): RetryPolicy => {
    const backoff = jitteredBackoff(backoffs.upstreamAttempt);
    return {
      attempts: 3,
      mayRetry,
      delayMs: (retry, error) => {
        const wait = waitFor(error);
        if (wait === 'at-once') return retry === 1 ? 0 : backoff(retry);
        return Math.max(backoff(retry), wait);
      },
    };
  },
};
