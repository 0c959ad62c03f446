import type { AlertPayload, BudgetAlert } from './alert';

/** Where an account's alerts are posted, and the secret their signature is made with. */
export interface AlertWebhook {
  url: string;
  secret: string;
  updatedAt: string;
}

/**
 * Seals the webhook's signing secret for storage and opens it to sign, bound to its account (the
 * provider keys' envelope encryption: KMS in AWS, the local key on a developer machine; deps.ts).
 */
export interface WebhookSecretSealer {
  seal(accountId: string, secret: string): Promise<string>;
  open(accountId: string, sealed: string): Promise<string>;
}

/** What became of one delivery of an alert. */
export interface DeliveryOutcome {
  target: 'webhook' | 'topic';
  delivered: boolean;
  attempts: number;
  /** Why the last attempt failed (status or error name), never the target's address. */
  problem?: string;
}

/** An alert as the account's history keeps it. */
export interface SentAlert {
  id: string;
  sentAt: string;
  payload: AlertPayload;
  deliveries: DeliveryOutcome[];
}

/** The alerts' storage (docs/alerts.md): each alert's claim, the account's recent alerts and its webhook. */
export interface AlertStore {
  /**
   * Claims the alert for this sender: true for exactly one caller per budget, fraction and period,
   * whatever the concurrency; the claim and the history entry are written together.
   */
  claim(alert: BudgetAlert, id: string, sentAt: string, payload: AlertPayload): Promise<boolean>;
  recordDeliveries(accountId: string, id: string, sentAt: string, deliveries: DeliveryOutcome[]): Promise<void>;
  /** The account's most recent alerts, newest first. */
  recent(accountId: string, limit: number): Promise<SentAlert[]>;
  webhook(accountId: string): Promise<AlertWebhook | undefined>;
  setWebhook(accountId: string, webhook: AlertWebhook): Promise<void>;
  /** False when the account had no webhook. */
  removeWebhook(accountId: string): Promise<boolean>;
}

/** The stack's alert topic (SNS in AWS): every account's alerts, for the operators. */
export interface AlertTopic {
  publish(payload: AlertPayload): Promise<void>;
}
