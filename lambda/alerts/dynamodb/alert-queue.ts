import type { AlertQueue, QueuedAlert } from '../ports';
import type { DocumentClient } from '../../store/dynamodb/document-client';

/** The partition of the accounts table holding a local server's queued alert deliveries. */
export const LOCAL_ALERT_QUEUE_PK = 'ALERT_QUEUE';
const messageSk = (message: QueuedAlert) => `MSG#${message.alertId}#${message.attempt}`;

/** A message taken for delivery: done with it, it is removed. */
export interface TakenAlert {
  message: QueuedAlert;
  done: () => Promise<void>;
}

/**
 * The local server's alert queue (AWS uses SQS: alerts/sqs-queue.ts), as SQS behaves: a message
 * is an item with the time it is due; taking it moves that time a lease ahead, so one taker
 * delivers it, and a taker that stops before `done` leaves it to come again once the lease ends.
 * Several servers on one store share it. A local server queues a handful of alerts, so the
 * partition is read whole.
 */
export class DynamoAlertQueue implements AlertQueue {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly now: () => number = Date.now,
  ) {}

  async enqueue(message: QueuedAlert, delayMs: number): Promise<void> {
    await this.doc.send({
      operation: 'PutItem',
      input: {
        TableName: this.table,
        Item: {
          pk: LOCAL_ALERT_QUEUE_PK,
          sk: messageSk(message),
          message: JSON.stringify(message),
          due_at: this.now() + delayMs,
        },
      },
    });
  }

  /** The messages due now, each taken for `leaseMs`. */
  async take(limit: number, leaseMs: number): Promise<TakenAlert[]> {
    const now = this.now();
    const { Items = [] } = await this.doc.send({
      operation: 'Query',
      input: {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': LOCAL_ALERT_QUEUE_PK },
        ConsistentRead: true,
      },
    });
    const due = Items.flatMap((item) =>
      typeof item.due_at === 'number' && item.due_at <= now
        ? [{ sk: String(item.sk), dueAt: item.due_at, message: String(item.message) }]
        : [],
    ).slice(0, limit);
    const taken: TakenAlert[] = [];
    for (const item of due) {
      const key = { pk: LOCAL_ALERT_QUEUE_PK, sk: String(item.sk) };
      try {
        await this.doc.send({
          operation: 'UpdateItem',
          input: {
            TableName: this.table,
            Key: key,
            UpdateExpression: 'SET due_at = :lease',
            ConditionExpression: 'due_at = :seen',
            ExpressionAttributeValues: { ':lease': now + leaseMs, ':seen': item.dueAt },
          },
        });
      } catch (error) {
        // Another server took it first.
        if ((error as Error).name === 'ConditionalCheckFailedException') continue;
        throw error;
      }
      taken.push({
        message: JSON.parse(item.message) as QueuedAlert,
        done: async () => {
          await this.doc.send({ operation: 'DeleteItem', input: { TableName: this.table, Key: key } });
        },
      });
    }
    return taken;
  }
}
