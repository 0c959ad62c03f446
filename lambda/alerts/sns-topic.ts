import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { AlertPayload } from './alert';
import type { AlertTopic } from './ports';

/**
 * The stack's alert topic (SNS), on the client the composition root builds (wiring/aws-adapters.ts):
 * an e-mail subscriber reads the line first, then the JSON a program would read.
 */
export class SnsAlertTopic implements AlertTopic {
  constructor(
    private readonly client: SNSClient,
    private readonly topicArn: string,
  ) {}

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
