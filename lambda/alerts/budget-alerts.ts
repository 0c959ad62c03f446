import { randomUUID } from 'node:crypto';
import { subjectsOf, type BudgetSubject } from '../budgets/budget';
import type { BudgetStore } from '../budgets/ports';
import { eachInFlight } from '../base/in-flight';
import { describeError, type Logger } from '../base/logger';
import { retryPolicies, withRetries, type Sleep } from '../base/retry';
import type { UsageRow } from '../usage/usage-row';
import { alertPayload, reachedAlerts, type AlertPayload, type BudgetAlert } from './alert';
import type { AlertStore, AlertTopic, AlertWebhook, DeliveryOutcome } from './ports';
import { postSigned, WebhookError, type WebhookPolicy } from './webhook-delivery';

/** Budgets read at once while checking a batch. */
const READS_IN_FLIGHT = 8;

export interface BudgetAlertDeps {
  budgets: BudgetStore;
  store: AlertStore;
  /** The stack's topic; none locally. */
  topic?: AlertTopic;
  webhookPolicy: WebhookPolicy;
  log: Logger;
  now: () => number;
  /** The waits between delivery attempts (replaced in unit tests). */
  sleep?: Sleep;
}

interface Check {
  accountId: string;
  subject: BudgetSubject;
  /** The latest row time of this subject in the batch, within one UTC day. */
  at: number;
}

/**
 * Budget alerts (docs/alerts.md), sent from the usage-logs stream's consumer, never on the request
 * path. The consumer folds a batch's spend into its subjects' counters before it checks the batch
 * (stream-consumer.ts), so reading a budget then sees at least the spend of the rows checked. Each fraction reached is
 * claimed with a conditional write, so however many consumers read the same rows, one sends it.
 */
export class BudgetAlerts {
  constructor(private readonly deps: BudgetAlertDeps) {}

  /** Throws when a budget or a claim could not be read or written: the batch is then delivered again. */
  async check(rows: readonly UsageRow[]): Promise<void> {
    const checks = new Map<string, Check>();
    for (const row of rows) {
      if (!(row.cost_nanos > 0)) continue;
      const at = Date.parse(row.ts);
      for (const subject of subjectsOf(row)) {
        const id = `${row.account_id}\u0000${JSON.stringify(subject)}\u0000${row.ts.slice(0, 10)}`;
        const seen = checks.get(id);
        if (!seen || seen.at < at) checks.set(id, { accountId: row.account_id, subject, at });
      }
    }
    const reached: BudgetAlert[] = [];
    await eachInFlight([...checks.values()], READS_IN_FLIGHT, async ({ accountId, subject, at }) => {
      const status = await this.deps.budgets.statusOf(accountId, subject, at);
      if (status) reached.push(...reachedAlerts(accountId, status, at));
    });
    const webhooks = new Map<string, Promise<AlertWebhook | undefined>>();
    await eachInFlight(reached, READS_IN_FLIGHT, async (alert) => {
      const id = randomUUID();
      const sentAt = new Date(this.deps.now()).toISOString();
      const payload = alertPayload(alert);
      if (!(await this.deps.store.claim(alert, id, sentAt, payload))) return;
      if (!webhooks.has(alert.accountId)) webhooks.set(alert.accountId, this.deps.store.webhook(alert.accountId));
      const webhook = await webhooks.get(alert.accountId);
      const deliveries = await this.deliver(payload, webhook);
      this.deps.log.info('budget alert sent', {
        account_id: alert.accountId,
        alert_id: id,
        threshold: alert.threshold,
        period: alert.period,
        deliveries,
      });
      await this.deps.store
        .recordDeliveries(alert.accountId, id, sentAt, deliveries)
        .catch((error: unknown) => this.deps.log.warn('alert delivery not recorded', describeError(error)));
    });
  }

  /** Sends one claimed alert to each target; a failed target is recorded, never thrown (the claim is spent). */
  private async deliver(payload: AlertPayload, webhook: AlertWebhook | undefined): Promise<DeliveryOutcome[]> {
    const body = JSON.stringify(payload);
    const sends: Promise<DeliveryOutcome>[] = [];
    if (webhook)
      sends.push(this.attempt('webhook', () => postSigned(webhook.url, body, webhook.secret, this.deps.webhookPolicy)));
    const topic = this.deps.topic;
    if (topic) sends.push(this.attempt('topic', () => topic.publish(payload)));
    return Promise.all(sends);
  }

  private async attempt(target: DeliveryOutcome['target'], send: () => Promise<unknown>): Promise<DeliveryOutcome> {
    let attempts = 0;
    const mayRetry = (error: unknown) => !(error instanceof WebhookError) || error.retryable;
    try {
      await withRetries(
        () => {
          attempts++;
          return send();
        },
        retryPolicies.alertDelivery(mayRetry),
        this.deps.sleep,
      );
      return { target, delivered: true, attempts };
    } catch (error) {
      const problem = error instanceof WebhookError ? error.problem : (error as Error).name;
      return { target, delivered: false, attempts, problem };
    }
  }
}
