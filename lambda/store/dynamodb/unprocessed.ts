import { retryPolicies, withRetries } from '../../retry';

/** A batch call still left some keys or items unprocessed after its last attempt. */
export class UnprocessedError extends Error {
  constructor(
    readonly left: number,
    kind: string,
  ) {
    super(`DynamoDB left ${left} ${kind} unprocessed`);
    this.name = 'UnprocessedError';
  }
}

/**
 * Sends a batch, then what DynamoDB left unprocessed (throttled partitions),
 * under the `unprocessedItems` policy. `send` sends its argument and returns
 * what is left. Errors of the call itself are the client's to retry, not ours.
 */
export function sendUntilProcessed<T>(
  batch: T[],
  kind: string,
  send: (pending: T[]) => Promise<T[]>,
  attempts?: number,
): Promise<void> {
  let pending = batch;
  return withRetries(
    async () => {
      pending = await send(pending);
      if (pending.length) throw new UnprocessedError(pending.length, kind);
    },
    retryPolicies.unprocessedItems((error) => error instanceof UnprocessedError, attempts),
  );
}
