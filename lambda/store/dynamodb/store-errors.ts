import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * The stored item a failed condition was checked against, if the request asked for it
 * (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`), as a plain object: the document client
 * converts what it answers, not the items inside its errors.
 */
export function conditionFailedItem(error: unknown): Record<string, unknown> | undefined {
  return error instanceof ConditionalCheckFailedException && error.Item ? unmarshall(error.Item) : undefined;
}

/** Why each action of a cancelled transaction failed, in the order sent (`None` for those that would have succeeded); undefined for any other error. */
export function cancellationReasons(error: unknown): string[] | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
}

/** The item a cancelled transaction's action `index` found, when it asked for it (`ReturnValuesOnConditionCheckFailure`). */
export function cancelledItem(error: unknown, index: number): Record<string, unknown> | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const item = error.CancellationReasons?.[index]?.Item;
  return item ? unmarshall(item) : undefined;
}

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
