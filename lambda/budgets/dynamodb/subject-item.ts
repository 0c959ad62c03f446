import { createHash } from 'node:crypto';
import type { Budget, BudgetSubject, Spend } from '../budget';
import { dayOf, isBudgetPeriod, monthOf } from '../periods';
import { accountPk } from '../../store/dynamodb/account-partition';

/**
 * Each subject (token, requester or tag value) has a partition of its own, `ACCOUNT#<id>#T#<token id>` /
 * `ACCOUNT#<id>#R#<label hash>` / `ACCOUNT#<id>#G#<key>=<value>`, holding one item, `BUDGET`: what the
 * request path reads for the subject's budget, in one BatchGetItem with any other read of its wave.
 *
 * - the limit, period and alert fractions, when a budget is set;
 * - the lifetime spend, `spent_total_nanos`;
 * - the spend of each recent UTC month, `m#<YYYY-MM>`, and day, `d#<YYYY-MM-DD>`;
 * - per stream shard, the last row whose spend it counts, `w#<shard hash>` (spend-fold.ts).
 *
 * The spend is folded from the usage-logs stream (spend-fold.ts), which also removes the months,
 * days and shard watermarks no row can add to any more, so the item stays a few hundred bytes and
 * each write of it is one write unit.
 *
 * The account's partition keeps one listing item per budget, `BUDGET#T#<token id>` /
 * `BUDGET#R#<label hash>` / `BUDGET#G#<key>=<value>`, with the same limit and period: it is what
 * lists an account's budgets, and it changes only when a budget does.
 *
 * Requester labels can be 8 KB, over DynamoDB's 1 KB sort key limit, so their keys use a hash; a
 * tag is at most 141 characters (docs/tags.md) and is kept readable.
 */
function subjectId(subject: BudgetSubject): string {
  if (subject.kind === 'tag') return `G#${subject.key}=${subject.value}`;
  return subject.kind === 'token'
    ? `T#${subject.tokenId}`
    : `R#${createHash('sha256').update(subject.requester).digest('base64url')}`;
}

export const BUDGET_PREFIX = { token: 'BUDGET#T#', requester: 'BUDGET#R#', tag: 'BUDGET#G#' } as const;

/** The listing item in the account's partition. */
export const listingKey = (accountId: string, subject: BudgetSubject) => ({
  pk: accountPk(accountId),
  sk: `BUDGET#${subjectId(subject)}`,
});

/** The subject's own item, in its own partition. */
export const subjectKey = (accountId: string, subject: BudgetSubject) => ({
  pk: `${accountPk(accountId)}#${subjectId(subject)}`,
  sk: 'BUDGET',
});

export const TOTAL_ATTRIBUTE = 'spent_total_nanos';
export const monthAttribute = (at: number) => `m#${monthOf(at)}`;
export const dayAttribute = (at: number) => `d#${dayOf(at)}`;

export const whole = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

export function subjectAttributes(subject: BudgetSubject): Record<string, string> {
  if (subject.kind === 'tag') return { subject_kind: 'tag', tag_key: subject.key, tag_value: subject.value };
  return subject.kind === 'token'
    ? { subject_kind: 'token', token_id: subject.tokenId }
    : { subject_kind: 'requester', requester: subject.requester };
}

export function subjectOf(item: Record<string, unknown>): BudgetSubject | undefined {
  if (item.subject_kind === 'token' && typeof item.token_id === 'string')
    return { kind: 'token', tokenId: item.token_id };
  if (item.subject_kind === 'requester' && typeof item.requester === 'string')
    return { kind: 'requester', requester: item.requester };
  if (item.subject_kind === 'tag' && typeof item.tag_key === 'string' && typeof item.tag_value === 'string')
    return { kind: 'tag', key: item.tag_key, value: item.tag_value };
  return undefined;
}

export function budgetOf(item: Record<string, unknown> | undefined): Budget | undefined {
  if (!item || !isBudgetPeriod(item.period) || !(whole(item.limit_nanos) > 0)) return undefined;
  const budget: Budget = { limitNanos: whole(item.limit_nanos), period: item.period };
  // A budget stored before alerts existed has no `alert_at`: it alerts at the default fractions.
  if (Array.isArray(item.alert_at))
    budget.alertAt = item.alert_at.filter((fraction): fraction is number => typeof fraction === 'number');
  return budget;
}

/** The subject's spend in the day, month and lifetime of `at`. */
export function spendOf(item: Record<string, unknown> | undefined, at: number): Spend {
  return {
    day: whole(item?.[dayAttribute(at)]),
    month: whole(item?.[monthAttribute(at)]),
    total: whole(item?.[TOTAL_ATTRIBUTE]),
  };
}
