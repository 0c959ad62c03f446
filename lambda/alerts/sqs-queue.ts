import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { AlertQueue, QueuedAlert } from './ports';

/** SQS delays a message by at most 15 minutes. */
const MAX_DELAY_SECONDS = 900;

/**
 * The stack's alert queue (SQS): the stream consumer queues each claimed alert, and the queue
 * invokes the consumer's function with it, apart from the fold (docs/alerts.md). Imported by the
 * Lambda entry only, so the local server never loads the SQS client.
 */
export class SqsAlertQueue implements AlertQueue {
  private readonly client: SQSClient;

  constructor(
    region: string,
    private readonly queueUrl: string,
  ) {
    this.client = new SQSClient({ region });
  }

  async enqueue(message: QueuedAlert, delayMs: number): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil(delayMs / 1000)),
      }),
    );
  }
}
