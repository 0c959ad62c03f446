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

/** `pending` until every target has it (`delivered`) or its last attempt failed (`failed`). */
export type AlertState = 'pending' | 'delivered' | 'failed';

/** An alert as the account's history keeps it. */
export interface SentAlert {
  id: string;
  sentAt: string;
  payload: AlertPayload;
  deliveries: DeliveryOutcome[];
  state: AlertState;
}

/** An alert's claim as stored: its id and history entry, and whether its delivery was queued yet. */
export interface AlertClaim {
  id: string;
  sentAt: string;
  queued: boolean;
}

/** One delivery attempt waiting in the queue: which alert (its history entry), which attempt. */
export interface QueuedAlert {
  accountId: string;
  alertId: string;
  sentAt: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/**
 * Where claimed alerts wait for delivery, off the fold's path (docs/alerts.md): SQS in AWS, an
 * item per message in the accounts table on a local server (alerts/dynamodb/alert-queue.ts).
 */
export interface AlertQueue {
  enqueue(message: QueuedAlert, delayMs: number): Promise<void>;
}

/** The alerts' storage (docs/alerts.md): each alert's claim, the account's recent alerts and its webhook. */
export interface AlertStore {
  /**
   * Claims the alert: written once per budget, fraction and period, whatever the concurrency, with
   * its history entry. Answers the claim as stored: this caller's, or the one written before it.
   */
  claim(alert: BudgetAlert, id: string, sentAt: string, payload: AlertPayload): Promise<AlertClaim>;
  /** The claim's delivery is in the queue: later batches leave it alone. */
  markQueued(alert: BudgetAlert): Promise<void>;
  /** One alert of the history, read fresh; undefined once expired. */
  sent(accountId: string, id: string, sentAt: string): Promise<SentAlert | undefined>;
  recordDeliveries(
    accountId: string,
    id: string,
    sentAt: string,
    deliveries: DeliveryOutcome[],
    state: AlertState,
  ): Promise<void>;
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
