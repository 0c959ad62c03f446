/**
 * The one retry loop of the code base: the store client, the row writer and
 * the upstream call each say only which errors may be retried and how long to
 * wait before each new attempt.
 */
export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  attempts: number;
  /** Whether this error leaves the operation safe to send again. */
  mayRetry(error: unknown): boolean;
  /** Wait before retry number `retry` (1 for the first retry); 0 retries at once. */
  delayMs(retry: number): number;
}

export async function withRetries<T>(operation: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (attempt >= policy.attempts || !policy.mayRetry(error)) throw error;
      const delay = policy.delayMs(attempt);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
