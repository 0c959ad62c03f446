import { UnprocessedError } from './unprocessed';
import { DynamoError, DynamoTimeoutError } from './wire/dynamo-error';

/** DynamoDB's answers for "not now": throttling, and conflicts with a transaction in flight. */
const BUSY_TYPES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
]);
/** Why a transaction's actions failed when only load or a concurrent transaction stopped it. */
const BUSY_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'TransactionConflict']);
/** Network errors: the store could not be reached, or the connection broke before its answer. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * Whether an error thrown by a DynamoDB adapter means the store is unavailable
 * for now (throttled, failing with 5xx, unreachable, not answering) after the
 * client's own retries, as opposed to a refusal of what was asked (a failed
 * condition, a malformed request) or a bug in the caller, which stays a 500.
 */
export function isStoreOutage(error: unknown): boolean {
  if (error instanceof DynamoTimeoutError || error instanceof UnprocessedError) return true;
  if (error instanceof DynamoError) {
    if (BUSY_TYPES.has(error.name) || (error.status ?? 0) >= 500) return true;
    const reasons = error.name === 'TransactionCanceledException' ? (error.reasons ?? []) : [];
    return (
      reasons.some((reason) => BUSY_REASONS.has(reason)) &&
      reasons.every((reason) => reason === 'None' || BUSY_REASONS.has(reason))
    );
  }
  return NETWORK_CODES.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}
