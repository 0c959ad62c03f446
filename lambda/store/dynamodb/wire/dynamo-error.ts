/** DynamoDB's answer to a request it did not carry out, named by its `__type` (e.g. `ConditionalCheckFailedException`). */
export class DynamoError extends Error {
  /** Set when this answer showed the local clock off by more than AWS accepts and the offset was corrected. */
  clockSkewCorrected = false;

  constructor(
    name: string,
    message: string,
    readonly status?: number,
    /** The item as it was, when a failed condition asked for it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
    readonly item?: Record<string, unknown>,
    /** Why each action of a cancelled transaction failed (`None` for those that would have succeeded). */
    readonly reasons?: string[],
  ) {
    super(message);
    this.name = name;
  }
}

/** No answer within the attempt's time limit: the request may or may not have been applied. */
export class DynamoTimeoutError extends Error {
  constructor(ms: number) {
    super(`DynamoDB did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** The stored item a failed condition was checked against, if the request asked for it. */
export function conditionFailedItem(error: unknown): Record<string, unknown> | undefined {
  return error instanceof DynamoError && error.name === 'ConditionalCheckFailedException' ? error.item : undefined;
}

/** Why each action of a cancelled transaction failed, in the order sent; undefined for any other error. */
export function cancellationReasons(error: unknown): string[] | undefined {
  return error instanceof DynamoError && error.name === 'TransactionCanceledException' ? error.reasons : undefined;
}

/**
 * Refusals: DynamoDB did not apply the request, so any operation may be sent
 * again. A conflict with a transaction in flight on the same item is one too,
 * as is a transaction cancelled only by such conflicts or throttling.
 */
const REFUSED_TYPES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
]);
const REFUSED_REASONS = new Set(['None', 'TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
/** Network errors where the request never reached DynamoDB. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed call may be sent again, as the AWS SDK decides it
 * (throttling, 5xx, network errors, a corrected clock skew), narrowed for a
 * command that is not idempotent: after a 5xx, a timeout or a lost answer it
 * may have been applied, so only a refusal or a request that never left this
 * process is retried.
 */
export function mayRetry(error: unknown, idempotent: boolean): boolean {
  if (error instanceof DynamoError) {
    const refusedTransaction =
      error.name === 'TransactionCanceledException' &&
      (error.reasons ?? []).every((reason) => REFUSED_REASONS.has(reason));
    return (
      error.clockSkewCorrected ||
      REFUSED_TYPES.has(error.name) ||
      refusedTransaction ||
      (idempotent && (error.status ?? 500) >= 500)
    );
  }
  return idempotent || NOT_SENT_CODES.has((error as NodeJS.ErrnoException).code ?? '');
}
