import { retryPolicies, withRetries } from '../../base/retry';
import { UnprocessedError } from './store-errors';
import { mayRetryStoreCall } from './store-outage';

export { UnprocessedError };

/**
 * Sends a batch, then what DynamoDB left unprocessed (throttled partitions),
 * under the `unprocessedItems` policy. `send` sends its argument once (its
 * command marked `sentOnce`) and returns what is left: a call that fails as a
 * whole (throttled, 5xx, cut) is retried by this same policy, so the two
 * never nest and a batch is sent at most `attempts` times.
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
    retryPolicies.unprocessedItems((error) => error instanceof UnprocessedError || mayRetryStoreCall(error), attempts),
  );
}
