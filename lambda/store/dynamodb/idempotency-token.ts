import { createHash } from 'node:crypto';

/**
 * A TransactWriteItems `ClientRequestToken` (at most 36 characters) derived from what the
 * transaction writes: the same writes sent again after a lost answer carry the same token, so
 * within DynamoDB's 10-minute window they are reported as done rather than applied twice.
 */
export function idempotencyToken(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 36);
}
