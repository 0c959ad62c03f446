import type { BudgetPeriod } from './periods';
import { resetsAt } from './periods';
import type { UsageRow } from '../usage/usage-row';

/** Who a budget limits: a proxy token, a requester label (`x-proxy-user`) or a tag value within the account. */
export type BudgetSubject =
  | { kind: 'token'; tokenId: string }
  | { kind: 'requester'; requester: string }
  | { kind: 'tag'; key: string; value: string };

/** Every subject a row's cost counts toward: its token, its requester and each of its tags. */
export function subjectsOf(row: UsageRow): BudgetSubject[] {
  const subjects: BudgetSubject[] = [{ kind: 'token', tokenId: row.token_id }];
  if (row.requester) subjects.push({ kind: 'requester', requester: row.requester });
  for (const [key, value] of Object.entries(row.tags ?? {})) subjects.push({ kind: 'tag', key, value });
  return subjects;
}

export interface Budget {
  /** The limit in integer nano-dollars (limits are kept to 6 decimals of a dollar). */
  limitNanos: number;
  period: BudgetPeriod;
  /** Fractions of the limit at which an alert is sent, once per period each (docs/alerts.md); unset: `DEFAULT_ALERT_AT`. */
  alertAt?: readonly number[];
}

/** The alert fractions of a budget set without `alert_at`. */
export const DEFAULT_ALERT_AT: readonly number[] = [0.8, 1];

/** What a subject has spent so far, per period, in integer nano-dollars. */
export interface Spend {
  day: number;
  month: number;
  total: number;
}

/** A subject's budget with the spend of its current period, as read at `at`. */
export interface BudgetStatus {
  subject: BudgetSubject;
  budget: Budget;
  spentNanos: number;
  /** Epoch ms when the current period ends; undefined for `total`. */
  resetsAt?: number;
}

export function budgetStatus(subject: BudgetSubject, budget: Budget, spend: Spend, at: number): BudgetStatus {
  return { subject, budget, spentNanos: spend[budget.period], resetsAt: resetsAt(budget.period, at) };
}

export const remainingNanos = (status: BudgetStatus) => status.budget.limitNanos - status.spentNanos;

/** The budget closest to its limit among those that apply (the stricter one wins); undefined if none applies. */
export function tightest(statuses: readonly BudgetStatus[]): BudgetStatus | undefined {
  let best: BudgetStatus | undefined;
  for (const status of statuses) if (!best || remainingNanos(status) < remainingNanos(best)) best = status;
  return best;
}

export const isExhausted = (status: BudgetStatus) => status.spentNanos >= status.budget.limitNanos;

/** Nano-dollars as a dollar amount with 6 decimals, rounded down (a remaining amount is never overstated). */
export function formatUsd(nanos: number): string {
  const micros = Math.floor(Math.max(0, nanos) / 1_000);
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}

export const PERIOD_WORDS: Record<BudgetPeriod, string> = { day: 'daily', month: 'monthly', total: 'total' };

export function describeSubject(subject: BudgetSubject): string {
  if (subject.kind === 'tag') return `tag ${subject.key}=${subject.value}`;
  return subject.kind === 'token' ? `proxy token ${subject.tokenId}` : `requester "${subject.requester.slice(0, 200)}"`;
}

/** The refusal text: which budget, what was spent, the limit and when it resets. */
export function exceededMessage(status: BudgetStatus): string {
  const reset =
    status.resetsAt === undefined
      ? 'A total budget does not reset; raise or remove it to continue.'
      : `It resets at ${new Date(status.resetsAt).toISOString()}.`;
  return `Budget exceeded: ${describeSubject(status.subject)} has spent $${formatUsd(status.spentNanos)} of its ${PERIOD_WORDS[status.budget.period]} budget of $${formatUsd(status.budget.limitNanos)}. ${reset}`;
}

/**
 * The refusal text for a model without a price under a budget: it would spend nothing against the
 * budget, so it is refused until it has a price (docs/budgets.md, "Models without a price").
 */
export function unpricedMessage(model: string, status: BudgetStatus): string {
  return `Model "${model.slice(0, 200)}" has no price, and the ${PERIOD_WORDS[status.budget.period]} budget of ${describeSubject(status.subject)} applies to this request: its spend could not be counted. Price it for this account with PUT /api/prices/${encodeURIComponent(model.slice(0, 200))} (or in Model prices on the dashboard's Tokens page; docs/usage-and-pricing.md, "Account prices"), give it a price in PRICING_FILE, or use a priced model.`;
}

/**
 * A request whose body names no model (an upload such as a multipart audio transcription, any body that
 * is not JSON) can't be priced before it is forwarded, so while a budget applies it is refused: its
 * spend could not be counted (docs/budgets.md, "Requests the proxy cannot price").
 */
export function unpriceableMessage(contentType: string | undefined, status: BudgetStatus): string {
  const what = contentType ? `a "${contentType.split(';')[0].trim().slice(0, 100)}" body` : 'a body';
  return `This request can't be priced before it is sent: ${what} names no model the proxy reads, and the ${PERIOD_WORDS[status.budget.period]} budget of ${describeSubject(status.subject)} applies to this request: its spend could not be counted. Send requests the proxy can't price (uploads, audio transcriptions) with a proxy token and requester no budget applies to (docs/budgets.md, "Requests the proxy cannot price").`;
}
