import { createHash } from 'node:crypto';
import {
  budgetStatus,
  DEFAULT_ALERT_AT,
  type Budget,
  type BudgetStatus,
  type BudgetSubject,
  type Spend,
} from '../budget';
import { dayAttribute, isBudgetPeriod, monthOf, nextMonthStart } from '../periods';
import type { BudgetStore } from '../ports';
import type { UsageRow } from '../../usage/usage-row';
import { accountPk } from '../../store/dynamodb/account-partition';
import { BatchedGet } from '../../store/dynamodb/batched-get';
import type { CounterChange } from '../../store/dynamodb/counter-change';
import { allItems } from '../../store/dynamodb/paginate';
import { gateBudgetFlag } from '../../auth/dynamodb/gate-item';
import { cancellationReasons } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

type TransactUpdate = NonNullable<NonNullable<TransactWriteCommandInput['TransactItems']>[number]['Update']>;

/**
 * Each subject (token, requester or tag value) has a partition of its own, `ACCOUNT#<id>#T#<token id>` /
 * `ACCOUNT#<id>#R#<label hash>` / `ACCOUNT#<id>#G#<key>=<value>`: every priced row adds to its counters, so in the account's
 * partition they would put all of an account's traffic on one partition's write limit
 * (docs/deploy.md, "Partition ceilings"). The request path reads a subject's two items together,
 * in one BatchGetItem with any other read of the same wave:
 *
 * - `BUDGET`: the limit and period (when a budget is set) and the lifetime spend, `spent_total_nanos`;
 * - `SPEND#<YYYY-MM>`: the UTC month's spend, `spent_nanos`, and each day's, `d01`…`d31`;
 *   it expires (TTL) a day after the month ends.
 *
 * The account's partition keeps one listing item per budget, `BUDGET#T#<token id>` /
 * `BUDGET#R#<label hash>`, with the same limit and period, written in one transaction with the
 * subject's: it is what lists an account's budgets, and it changes only when a budget does.
 *
 * Requester labels can be 8 KB, over DynamoDB's 1 KB sort key limit, so their keys use a hash; a
 * tag is at most 141 characters (docs/tags.md) and is kept readable.
 */
const BUDGET_PREFIX = { token: 'BUDGET#T#', requester: 'BUDGET#R#', tag: 'BUDGET#G#' } as const;
const EXPIRY_GRACE_SECONDS = 86_400;

function subjectId(subject: BudgetSubject): string {
  if (subject.kind === 'tag') return `G#${subject.key}=${subject.value}`;
  return subject.kind === 'token'
    ? `T#${subject.tokenId}`
    : `R#${createHash('sha256').update(subject.requester).digest('base64url')}`;
}

/** The listing item in the account's partition. */
const listingKey = (accountId: string, subject: BudgetSubject) => ({
  pk: accountPk(accountId),
  sk: `BUDGET#${subjectId(subject)}`,
});
/** The subject's own partition. */
const subjectPk = (accountId: string, subject: BudgetSubject) => `${accountPk(accountId)}#${subjectId(subject)}`;
const budgetKey = (accountId: string, subject: BudgetSubject) => ({ pk: subjectPk(accountId, subject), sk: 'BUDGET' });
const monthKey = (accountId: string, subject: BudgetSubject, at: number) => ({
  pk: subjectPk(accountId, subject),
  sk: `SPEND#${monthOf(at)}`,
});
const whole = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function subjectAttributes(subject: BudgetSubject): Record<string, string> {
  if (subject.kind === 'tag') return { subject_kind: 'tag', tag_key: subject.key, tag_value: subject.value };
  return subject.kind === 'token'
    ? { subject_kind: 'token', token_id: subject.tokenId }
    : { subject_kind: 'requester', requester: subject.requester };
}

function subjectOf(item: Record<string, unknown>): BudgetSubject | undefined {
  if (item.subject_kind === 'token' && typeof item.token_id === 'string')
    return { kind: 'token', tokenId: item.token_id };
  if (item.subject_kind === 'requester' && typeof item.requester === 'string')
    return { kind: 'requester', requester: item.requester };
  if (item.subject_kind === 'tag' && typeof item.tag_key === 'string' && typeof item.tag_value === 'string')
    return { kind: 'tag', key: item.tag_key, value: item.tag_value };
  return undefined;
}

function budgetOf(item: Record<string, unknown> | undefined): Budget | undefined {
  if (!item || !isBudgetPeriod(item.period) || !(whole(item.limit_nanos) > 0)) return undefined;
  const budget: Budget = { limitNanos: whole(item.limit_nanos), period: item.period };
  // A budget stored before alerts existed has no `alert_at`: it alerts at the default fractions.
  if (Array.isArray(item.alert_at))
    budget.alertAt = item.alert_at.filter((fraction): fraction is number => typeof fraction === 'number');
  return budget;
}

function spendOf(
  budgetItem: Record<string, unknown> | undefined,
  monthItem: Record<string, unknown> | undefined,
  at: number,
): Spend {
  return {
    day: whole(monthItem?.[dayAttribute(at)]),
    month: whole(monthItem?.spent_nanos),
    total: whole(budgetItem?.spent_total_nanos),
  };
}

/**
 * What one row adds to the spend of its token, requester and each of its tags: its cost, on the
 * lifetime, month and day counters. Added whether or not a budget is set, so a
 * budget set later sees what was already spent. The usage log applies these in
 * the same transaction as the row itself (usage-log.ts), so each row is counted once.
 */
export function spendChanges(row: UsageRow): CounterChange[] {
  const cost = whole(row.cost_nanos);
  if (cost <= 0) return [];
  const at = Date.parse(row.ts);
  const subjects: BudgetSubject[] = [{ kind: 'token', tokenId: row.token_id }];
  if (row.requester) subjects.push({ kind: 'requester', requester: row.requester });
  for (const [key, value] of Object.entries(row.tags ?? {})) subjects.push({ kind: 'tag', key, value });
  const expiresAt = Math.floor(nextMonthStart(at) / 1000) + EXPIRY_GRACE_SECONDS;
  return subjects.flatMap((subject): CounterChange[] => [
    {
      key: budgetKey(row.account_id, subject),
      increments: { spent_total_nanos: cost },
      set: subjectAttributes(subject),
    },
    {
      key: monthKey(row.account_id, subject, at),
      increments: { spent_nanos: cost, [dayAttribute(at)]: cost },
      set: { expires_at: expiresAt },
    },
  ]);
}

export class DynamoBudgetStore implements BudgetStore {
  /** Share the account store's `BatchedGet`, so budgets read with the token cost no extra call. */
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    /** The rate-limits table: a token's gate item says whether the token has a budget. */
    private readonly gateTable: string,
    private readonly reads: BatchedGet = new BatchedGet(doc, table, ['pk', 'sk']),
  ) {}

  statusOf(accountId: string, subject: BudgetSubject, at: number): Promise<BudgetStatus | undefined> {
    const budgetRead = this.reads.get(budgetKey(accountId, subject));
    const monthRead = this.reads.get(monthKey(accountId, subject, at));
    return Promise.all([budgetRead, monthRead]).then(([budgetItem, monthItem]) => {
      const budget = budgetOf(budgetItem);
      return budget && budgetStatus(subject, budget, spendOf(budgetItem, monthItem, at), at);
    });
  }

  async setBudget(accountId: string, subject: BudgetSubject, budget: Budget, updatedAt: string): Promise<void> {
    const attributes = {
      ...subjectAttributes(subject),
      limit_nanos: budget.limitNanos,
      period: budget.period,
      alert_at: budget.alertAt ?? DEFAULT_ALERT_AT,
      updated_at: updatedAt,
    };
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const assignments = Object.entries(attributes).map(([name, value], i) => {
      names[`#n${i}`] = name;
      values[`:v${i}`] = value;
      return `#n${i} = :v${i}`;
    });
    // Updates, not puts: the lifetime spend on the subject's item must survive a budget change.
    const update = (Key: Record<string, string>) => ({
      TableName: this.table,
      Key,
      UpdateExpression: `SET ${assignments.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
    await this.write(subject, true, [update(listingKey(accountId, subject)), update(budgetKey(accountId, subject))]);
  }

  async removeBudget(accountId: string, subject: BudgetSubject): Promise<boolean> {
    try {
      // The spend stays: setting a budget again later sees what was already spent.
      const remove = (Key: Record<string, string>) => ({
        TableName: this.table,
        Key,
        UpdateExpression: 'REMOVE limit_nanos, #period',
        ExpressionAttributeNames: { '#period': 'period' },
      });
      await this.write(subject, false, [
        { ...remove(listingKey(accountId, subject)), ConditionExpression: 'attribute_exists(limit_nanos)' },
        remove(budgetKey(accountId, subject)),
      ]);
      return true;
    } catch (error) {
      if (
        (error as Error).name === 'ConditionalCheckFailedException' ||
        cancellationReasons(error)?.[0] === 'ConditionalCheckFailed'
      )
        return false;
      throw error;
    }
  }

  /**
   * The listing item and the subject's item change together, in one transaction, and a token's
   * budget with its gate's flag (token-gate.ts): the proxy reads a token's budget only when the
   * gate says it has one. A requester budget spans every token of its account; the proxy reads it
   * whenever a request names its requester. The listing item's update comes first: its condition
   * is the one a removal checks.
   */
  private async write(subject: BudgetSubject, hasBudget: boolean, updates: TransactUpdate[]): Promise<void> {
    const gate = subject.kind === 'token' ? gateBudgetFlag(this.gateTable, subject.tokenId, hasBudget) : [];
    await this.doc.send({
      operation: 'TransactWriteItems',
      input: { TransactItems: [...updates, ...gate].map((update) => ({ Update: update })) },
    });
  }

  async listBudgets(accountId: string, kind: BudgetSubject['kind'], at: number): Promise<BudgetStatus[]> {
    const pk = accountPk(accountId);
    const items = await allItems((start) =>
      this.doc.send({
        operation: 'Query',
        input: {
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: 'attribute_exists(limit_nanos)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': BUDGET_PREFIX[kind] },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        },
      }),
    );
    const statuses = items.map(async (item) => {
      const subject = subjectOf(item);
      const budget = budgetOf(item);
      if (!subject || !budget) return undefined;
      const [budgetItem, monthItem] = await Promise.all([
        this.reads.get(budgetKey(accountId, subject)),
        this.reads.get(monthKey(accountId, subject, at)),
      ]);
      return budgetStatus(subject, budget, spendOf(budgetItem, monthItem, at), at);
    });
    return (await Promise.all(statuses)).filter((s): s is BudgetStatus => s !== undefined);
  }
}
