import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { AlertPayload } from './alert';
import type { AlertTopic } from './ports';

/**
 * The stack's alert topic (SNS): an e-mail subscriber reads the line first, then the JSON a program
 * would read. Imported by the stream consumer's Lambda entry only, so the local server never loads
 * the SNS client.
 */
export class SnsAlertTopic implements AlertTopic {
  private readonly client: SNSClient;

  constructor(
    region: string,
    private readonly topicArn: string,
  ) {
    // One attempt per call: the alert queue retries a failed delivery (retry.ts, `alertDelivery`),
    // so the SDK's own three tries would multiply its attempts.
    this.client = new SNSClient({ region, maxAttempts: 1 });
  }

  async publish(payload: AlertPayload): Promise<void> {
    await this.client.send(
      new PublishCommand({
        TopicArn: this.topicArn,
        // SNS subjects are at most 100 printable ASCII characters.
        Subject: `Budget alert: ${Math.round(payload.threshold * 100)}% of a ${payload.period} budget`.slice(0, 100),
        Message: `${payload.text}\n\n${JSON.stringify(payload, null, 2)}`,
      }),
    );
  }
}
