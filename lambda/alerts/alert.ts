import { createHash } from 'node:crypto';
import {
  DEFAULT_ALERT_AT,
  describeSubject,
  formatUsd,
  PERIOD_WORDS,
  type BudgetStatus,
  type BudgetSubject,
} from '../budgets/budget';
import { periodStart, type BudgetPeriod } from '../budgets/periods';

/** One budget reaching one of its alert fractions in one period (docs/alerts.md). */
export interface BudgetAlert {
  accountId: string;
  subject: BudgetSubject;
  /** The fraction of the limit that was reached, e.g. 0.8. */
  threshold: number;
  spentNanos: number;
  limitNanos: number;
  period: BudgetPeriod;
  /** Epoch ms the period started; undefined for a `total` budget. */
  periodStart?: number;
  /** A token subject's name, for the text (a person reads a name, not an id); absent when it has none. */
  tokenName?: string;
}

/** The alerts a budget's spend calls for: one per fraction of `alert_at` its spend has reached. */
export function reachedAlerts(accountId: string, status: BudgetStatus, at: number): BudgetAlert[] {
  const { budget, spentNanos, subject } = status;
  return (budget.alertAt ?? DEFAULT_ALERT_AT)
    .filter((threshold) => spentNanos >= Math.ceil(threshold * budget.limitNanos))
    .map((threshold) => ({
      accountId,
      subject,
      threshold,
      spentNanos,
      limitNanos: budget.limitNanos,
      period: budget.period,
      periodStart: periodStart(budget.period, at),
    }));
}

/**
 * What makes an alert the same alert: the budget (its subject and limit: a changed limit is a new
 * budget), the fraction and the period. Requester labels can be 8 KB, so the key holds a hash.
 */
export function alertKey(alert: BudgetAlert): string {
  const subject = JSON.stringify(subjectJson(alert.subject));
  const period = alert.periodStart === undefined ? 'total' : `${alert.period}@${alert.periodStart}`;
  const digest = createHash('sha256').update(subject).digest('base64url');
  return `${digest}#${alert.limitNanos}#${period}#${alert.threshold}`;
}

export type SubjectJson =
  | { kind: 'token'; token_id: string }
  | { kind: 'requester'; requester: string }
  | { kind: 'tag'; key: string; value: string };

export function subjectJson(subject: BudgetSubject): SubjectJson {
  if (subject.kind === 'token') return { kind: 'token', token_id: subject.tokenId };
  if (subject.kind === 'requester') return { kind: 'requester', requester: subject.requester };
  return { kind: 'tag', key: subject.key, value: subject.value };
}

const percent = (fraction: number) => `${Math.round(fraction * 1000) / 10}%`;

/** The budget's subject as a person knows it: a token by its name, never its id; a requester or tag by its label. */
function subjectText(alert: BudgetAlert): string {
  if (alert.subject.kind !== 'token') return describeSubject(alert.subject);
  return alert.tokenName ? `proxy token "${alert.tokenName.slice(0, 200)}"` : 'an unnamed proxy token';
}

/** One line a person reads in a chat channel or an e-mail subject. */
export function alertText(alert: BudgetAlert): string {
  return (
    `Budget alert: ${subjectText(alert)} has spent $${formatUsd(alert.spentNanos)} ` +
    `of its ${PERIOD_WORDS[alert.period]} budget of $${formatUsd(alert.limitNanos)} ` +
    `(${percent(alert.spentNanos / alert.limitNanos)}; alert at ${percent(alert.threshold)}).`
  );
}

/** The JSON a webhook receives, and the SNS message (docs/alerts.md, "Webhook payload"). */
export interface AlertPayload {
  /** Stable across every delivery of this alert: a receiver drops an id it has already seen. */
  id: string;
  type: 'budget.threshold';
  text: string;
  account_id: string;
  subject: SubjectJson;
  threshold: number;
  spent_usd: number;
  limit_usd: number;
  period: BudgetPeriod;
  /** ISO 8601; null for a `total` budget. */
  period_start: string | null;
}

export function alertPayload(alert: BudgetAlert, id: string): AlertPayload {
  return {
    id,
    type: 'budget.threshold',
    text: alertText(alert),
    account_id: alert.accountId,
    subject: subjectJson(alert.subject),
    threshold: alert.threshold,
    spent_usd: alert.spentNanos / 1e9,
    limit_usd: alert.limitNanos / 1e9,
    period: alert.period,
    period_start: alert.periodStart === undefined ? null : new Date(alert.periodStart).toISOString(),
  };
}
