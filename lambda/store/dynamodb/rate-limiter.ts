import type { RateLimitDecision, RateLimiter } from '../ports';
import { sentAtMostOnce, type DocumentClient } from './wire/document-client';

const WINDOW_SECONDS = 60;

/**
 * Fixed one-minute windows, one counter item per token and window. The count
 * only grows while it is below the limit (a conditional ADD), so concurrent
 * instances can never admit more than the limit between them.
 */
export class DynamoRateLimiter implements RateLimiter {
  constructor(private readonly doc: DocumentClient, private readonly table: string, private readonly limit: number) {}

  async hit(tokenId: string, now: number): Promise<RateLimitDecision> {
    const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
    const resetAt = windowStart + WINDOW_SECONDS;
    try {
      const { Attributes } = await this.doc.send(
        {
          operation: 'UpdateItem',
          input: {
            TableName: this.table,
            Key: { counter_key: `${tokenId}#${windowStart}` },
            UpdateExpression: 'ADD #count :one SET expires_at = :expires',
            ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
            ExpressionAttributeNames: { '#count': 'count' },
            // Kept a little past the window so a late refund still finds it.
            ExpressionAttributeValues: { ':one': 1, ':limit': this.limit, ':expires': resetAt + WINDOW_SECONDS },
            ReturnValues: 'UPDATED_NEW',
          },
        },
      );
      const count = Number(Attributes?.count ?? this.limit);
      return { allowed: true, limit: this.limit, remaining: Math.max(0, this.limit - count), resetAt };
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      return { allowed: false, limit: this.limit, remaining: 0, resetAt };
    }
  }

  async refund(tokenId: string, decision: RateLimitDecision): Promise<void> {
    if (!decision.allowed) return;
    const windowStart = decision.resetAt - WINDOW_SECONDS;
    await this.doc
      .send(
        sentAtMostOnce(
          {
            operation: 'UpdateItem',
            input: {
              TableName: this.table,
              Key: { counter_key: `${tokenId}#${windowStart}` },
              UpdateExpression: 'ADD #count :minusOne',
              ConditionExpression: '#count > :zero',
              ExpressionAttributeNames: { '#count': 'count' },
              ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
            },
          },
        ),
      )
      .catch((error: Error) => {
        if (error.name !== 'ConditionalCheckFailedException') throw error;
      });
  }
}
