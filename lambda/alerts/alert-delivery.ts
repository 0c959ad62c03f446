import type { Logger } from '../base/logger';
import type { RetryPolicy } from '../base/retry';
import { alertFailureMetricLine } from './alert-metrics';
import type { AlertQueue, AlertState, AlertStore, AlertTopic, DeliveryOutcome, QueuedAlert } from './ports';
import { postSigned, WebhookError, type WebhookPolicy } from './webhook-delivery';

export interface AlertDeliveryDeps {
  store: AlertStore;
  queue: AlertQueue;
  /** The stack's topic; none locally. */
  topic?: AlertTopic;
  webhookPolicy: WebhookPolicy;
  /** How many attempts, and the wait before each next one (retry.ts, `alertDelivery`). */
  policy: (mayRetry: (error: unknown) => boolean) => RetryPolicy;
  log: Logger;
  /** Where the metric line of an alert given up on goes (the function's log: CloudWatch reads it). */
  writeMetric: (line: string) => void;
  now: () => number;
}

interface Attempt {
  outcome: DeliveryOutcome;
  retryable: boolean;
}

const mayRetry = (error: unknown) => !(error instanceof WebhookError) || error.retryable;

/**
 * Sends queued alerts (docs/alerts.md), one attempt per message, away from the usage fold: in AWS
 * the stream consumer's function invoked by the alert queue, locally a loop of the server. An
 * attempt posts to each target that does not have the alert yet; a failure that may pass queues
 * the next attempt after the policy's wait, for hours; the last failure marks the alert `failed`
 * with a WARN line and a metric. The history entry is the truth: a message for an alert already
 * delivered or given up on (a duplicate after a crash) sends nothing.
 */
export class AlertDelivery {
  constructor(private readonly deps: AlertDeliveryDeps) {}

  /** Throws when the store or the queue could not be read or written: the message must come again. */
  async deliver(message: QueuedAlert): Promise<void> {
    const sent = await this.deps.store.sent(message.accountId, message.alertId, message.sentAt);
    if (!sent || sent.state !== 'pending') return;
    const before = new Map(sent.deliveries.map((d) => [d.target, d]));
    const webhook = await this.deps.store.webhook(message.accountId);
    const body = JSON.stringify(sent.payload);
    const sends: Array<Promise<Attempt>> = [];
    const attempt = (target: DeliveryOutcome['target'], send: () => Promise<unknown>) => {
      if (before.get(target)?.delivered) return;
      sends.push(this.attempt(target, (before.get(target)?.attempts ?? 0) + 1, send));
    };
    if (webhook)
      attempt('webhook', () => postSigned(webhook.url, body, webhook.secret, this.deps.webhookPolicy, this.deps.now()));
    const topic = this.deps.topic;
    if (topic) attempt('topic', () => topic.publish(sent.payload));
    const attempts = await Promise.all(sends);
    const outcomes = new Map(before);
    for (const { outcome } of attempts) outcomes.set(outcome.target, outcome);
    const deliveries = [...outcomes.values()];

    const policy = this.deps.policy(mayRetry);
    const failed = attempts.filter(({ outcome }) => !outcome.delivered);
    const again = failed.length > 0 && message.attempt < policy.attempts && failed.some((a) => a.retryable);
    const state: AlertState = failed.length === 0 ? 'delivered' : again ? 'pending' : 'failed';
    await this.deps.store.recordDeliveries(message.accountId, message.alertId, message.sentAt, deliveries, state);
    const fields = { account_id: message.accountId, alert_id: message.alertId, attempt: message.attempt, deliveries };
    if (state === 'delivered') this.deps.log.info('budget alert delivered', fields);
    else if (state === 'failed') {
      this.deps.log.warn('budget alert not delivered; giving up', fields);
      this.deps.writeMetric(alertFailureMetricLine(this.deps.now()));
    } else {
      await this.deps.queue.enqueue({ ...message, attempt: message.attempt + 1 }, policy.delayMs(message.attempt));
      this.deps.log.info('budget alert not delivered yet; trying again later', fields);
    }
  }

  private async attempt(
    target: DeliveryOutcome['target'],
    attempts: number,
    send: () => Promise<unknown>,
  ): Promise<Attempt> {
    try {
      await send();
      return { outcome: { target, delivered: true, attempts }, retryable: false };
    } catch (error) {
      const problem = error instanceof WebhookError ? error.problem : (error as Error).name;
      return { outcome: { target, delivered: false, attempts, problem }, retryable: mayRetry(error) };
    }
  }
}
