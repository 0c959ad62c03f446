import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { AlertQueue, QueuedAlert } from './ports';

/** SQS delays a message by at most 15 minutes. */
const MAX_DELAY_SECONDS = 900;

/**
 * The stack's alert queue (SQS): the stream consumer queues each claimed alert, and the queue
 * invokes the consumer's function with it, apart from the fold (docs/alerts.md). Its client is
 * built with the Lambda entries' adapters (wiring/aws-adapters.ts), so the local server never loads it.
 */
export class SqsAlertQueue implements AlertQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

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
