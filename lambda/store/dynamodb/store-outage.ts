import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { StoreDeadlineError } from './deadlines';
import { cancellationReasons, UnprocessedError } from './store-errors';

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

/** An error the SDK built from an answer of DynamoDB (or of whatever answered in its place). */
interface AnswerError {
  name: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

function answered(error: unknown): AnswerError | undefined {
  if (error instanceof DynamoDBServiceException) return error;
  // An answer the SDK could not read as DynamoDB's (a proxy's 502 page) still carries its status.
  const status = (error as AnswerError | undefined)?.$metadata?.httpStatusCode;
  return status === undefined ? undefined : (error as AnswerError);
}

/**
 * Whether an error thrown by a DynamoDB adapter means the store is unavailable for now
 * (throttled, failing with 5xx, unreachable, not answering, past its deadline) after the client's retries, as
 * opposed to a refusal of what was asked (a failed condition, a malformed request) or a bug in the
 * caller, which stays a 500.
 */
export function isStoreOutage(error: unknown): boolean {
  if (error instanceof UnprocessedError || error instanceof StoreDeadlineError) return true;
  const answer = answered(error);
  if (answer) {
    if (BUSY_TYPES.has(answer.name) || (answer.$metadata?.httpStatusCode ?? 0) >= 500) return true;
    const reasons = cancellationReasons(error) ?? [];
    return (
      reasons.some((reason) => BUSY_REASONS.has(reason)) &&
      reasons.every((reason) => reason === 'None' || BUSY_REASONS.has(reason))
    );
  }
  // No answer: the SDK's HTTP handler names a connection or socket that timed out `TimeoutError`.
  if ((error as Error | undefined)?.name === 'TimeoutError') return true;
  return NETWORK_CODES.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/**
 * Whether a failed call may be sent again: the store was busy, failing or out of reach (the
 * outage test), or it refused a signature whose time the SDK has just corrected from the answer's
 * `Date` header. Every command the stores send may be repeated: writes are keyed, guarded by a
 * condition or carry a `ClientRequestToken`, and the token gate's count errs on the safe side.
 */
export function mayRetryStoreCall(error: unknown): boolean {
  // A call past its deadline is over: the caller is told at once.
  if (error instanceof StoreDeadlineError) return false;
  const metadata = (error as { $metadata?: { clockSkewCorrected?: boolean } } | undefined)?.$metadata;
  return isStoreOutage(error) || metadata?.clockSkewCorrected === true;
}
