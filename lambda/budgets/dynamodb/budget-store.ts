import { createHash } from 'node:crypto';
import { budgetStatus, type Budget, type BudgetStatus, type BudgetSubject, type Spend } from '../budget';
import { dayAttribute, isBudgetPeriod, monthOf, nextMonthStart } from '../periods';
import type { BudgetStore } from '../ports';
import type { UsageRow } from '../../usage/usage-row';
import { accountPk } from '../../store/dynamodb/account-partition';
import { BatchedGet } from '../../store/dynamodb/batched-get';
import type { CounterChange } from '../../store/dynamodb/counter-change';
import { allItems } from '../../store/dynamodb/paginate';
import { gateBudgetFlag } from '../../auth/dynamodb/token-gate';
import { cancellationReasons } from '../../store/dynamodb/wire/dynamo-error';
import type { DocumentClient } from '../../store/dynamodb/wire/document-client';

/**
 * Budgets and spend counters live in the account's partition beside its
 * tokens; the request path reads a subject's two items together, in one
 * BatchGetItem with any other read of the same wave. Per subject (token or requester) two items:
 *
 * - `BUDGET#T#<token id>` / `BUDGET#R#<label hash>`: the limit and period (when
 *   a budget is set) and the lifetime spend, `spent_total_nanos`;
 * - `SPEND#<YYYY-MM>#T#…` / `SPEND#<YYYY-MM>#R#…`: the UTC month's spend,
 *   `spent_nanos`, and each day's, `d01`…`d31`; it expires (TTL) a day after the month ends.
 *
 * Requester labels can be 8 KB, over DynamoDB's 1 KB sort key limit, so their keys use a hash.
 */
const BUDGET_PREFIX = { token: 'BUDGET#T#', requester: 'BUDGET#R#' } as const;
const EXPIRY_GRACE_SECONDS = 86_400;

function subjectId(subject: BudgetSubject): string {
  return subject.kind === 'token' ? `T#${subject.tokenId}` : `R#${createHash('sha256').update(subject.requester).digest('base64url')}`;
}

const budgetSk = (subject: BudgetSubject) => `BUDGET#${subjectId(subject)}`;
const monthSk = (subject: BudgetSubject, at: number) => `SPEND#${monthOf(at)}#${subjectId(subject)}`;
const whole = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function subjectAttributes(subject: BudgetSubject): Record<string, string> {
  return subject.kind === 'token' ? { subject_kind: 'token', token_id: subject.tokenId } : { subject_kind: 'requester', requester: subject.requester };
}

function subjectOf(item: Record<string, unknown>): BudgetSubject | undefined {
  if (item.subject_kind === 'token' && typeof item.token_id === 'string') return { kind: 'token', tokenId: item.token_id };
  if (item.subject_kind === 'requester' && typeof item.requester === 'string') return { kind: 'requester', requester: item.requester };
  return undefined;
}

function budgetOf(item: Record<string, unknown> | undefined): Budget | undefined {
  if (!item || !isBudgetPeriod(item.period) || !(whole(item.limit_nanos) > 0)) return undefined;
  return { limitNanos: whole(item.limit_nanos), period: item.period };
}

function spendOf(budgetItem: Record<string, unknown> | undefined, monthItem: Record<string, unknown> | undefined, at: number): Spend {
  return { day: whole(monthItem?.[dayAttribute(at)]), month: whole(monthItem?.spent_nanos), total: whole(budgetItem?.spent_total_nanos) };
}

/**
 * What one row adds to the spend of its token and requester: its cost, on the
 * lifetime, month and day counters. Added whether or not a budget is set, so a
 * budget set later sees what was already spent. The usage log applies these in
 * the same transaction as the row itself (usage-log.ts), so each row is counted once.
 */
export function spendChanges(row: UsageRow): CounterChange[] {
  const cost = whole(row.cost_nanos);
  if (cost <= 0) return [];
  const at = Date.parse(row.ts);
  const pk = accountPk(row.account_id);
  const subjects: BudgetSubject[] = [{ kind: 'token', tokenId: row.token_id }];
  if (row.requester) subjects.push({ kind: 'requester', requester: row.requester });
  const expiresAt = Math.floor(nextMonthStart(at) / 1000) + EXPIRY_GRACE_SECONDS;
  return subjects.flatMap((subject): CounterChange[] => [
    { key: { pk, sk: budgetSk(subject) }, increments: { spent_total_nanos: cost }, set: subjectAttributes(subject) },
    { key: { pk, sk: monthSk(subject, at) }, increments: { spent_nanos: cost, [dayAttribute(at)]: cost }, set: { expires_at: expiresAt } },
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
    const pk = accountPk(accountId);
    const budgetRead = this.reads.get({ pk, sk: budgetSk(subject) });
    const monthRead = this.reads.get({ pk, sk: monthSk(subject, at) });
    return Promise.all([budgetRead, monthRead]).then(([budgetItem, monthItem]) => {
      const budget = budgetOf(budgetItem);
      return budget && budgetStatus(subject, budget, spendOf(budgetItem, monthItem, at), at);
    });
  }

  async setBudget(accountId: string, subject: BudgetSubject, budget: Budget, updatedAt: string): Promise<void> {
    const attributes = { ...subjectAttributes(subject), limit_nanos: budget.limitNanos, period: budget.period, updated_at: updatedAt };
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const assignments = Object.entries(attributes).map(([name, value], i) => {
      names[`#n${i}`] = name;
      values[`:v${i}`] = value;
      return `#n${i} = :v${i}`;
    });
    // An update, not a put: the lifetime spend on the same item must survive a budget change.
    await this.write(subject, true, {
      TableName: this.table,
      Key: { pk: accountPk(accountId), sk: budgetSk(subject) },
      UpdateExpression: `SET ${assignments.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  async removeBudget(accountId: string, subject: BudgetSubject): Promise<boolean> {
    try {
      await this.write(subject, false, {
        TableName: this.table,
        Key: { pk: accountPk(accountId), sk: budgetSk(subject) },
        // The spend stays: setting a budget again later sees what was already spent.
        UpdateExpression: 'REMOVE limit_nanos, #period',
        ConditionExpression: 'attribute_exists(limit_nanos)',
        ExpressionAttributeNames: { '#period': 'period' },
      });
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException' || cancellationReasons(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  /**
   * A token's budget changes together with its gate's flag (token-gate.ts), in one transaction:
   * the proxy reads a token's budget only when the gate says it has one. A requester budget
   * spans every token of its account; the proxy reads it whenever a request names its requester.
   */
  private async write(subject: BudgetSubject, hasBudget: boolean, update: Record<string, unknown> & { TableName: string; Key: Record<string, string>; UpdateExpression: string }): Promise<void> {
    if (subject.kind === 'requester') {
      await this.doc.send({ operation: 'UpdateItem', input: update });
      return;
    }
    await this.doc.send({
      operation: 'TransactWriteItems',
      input: { TransactItems: [{ Update: update }, { Update: gateBudgetFlag(this.gateTable, subject.tokenId, hasBudget) }] },
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
      const monthItem = await this.reads.get({ pk, sk: monthSk(subject, at) });
      return budgetStatus(subject, budget, spendOf(item, monthItem, at), at);
    });
    return (await Promise.all(statuses)).filter((s): s is BudgetStatus => s !== undefined);
  }
}
