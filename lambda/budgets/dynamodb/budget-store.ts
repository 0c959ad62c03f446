import { budgetStatus, DEFAULT_ALERT_AT, type Budget, type BudgetStatus, type BudgetSubject } from '../budget';
import type { BudgetStore } from '../ports';
import { itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import { BatchedGet } from '../../store/dynamodb/batched-get';
import { gateBudgetFlag } from '../../auth/dynamodb/gate-item';
import { cancellationReasons } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { BUDGET_PREFIX, budgetOf, listingKey, spendOf, subjectAttributes, subjectKey, subjectOf } from './subject-item';

type TransactUpdate = NonNullable<NonNullable<TransactWriteCommandInput['TransactItems']>[number]['Update']>;

/**
 * Budgets and the spend they are checked against, one item per subject (subject-item.ts). The
 * spend is folded in from the usage-logs stream (spend-fold.ts), never written on the request path.
 */
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
    return this.reads.get(subjectKey(accountId, subject)).then((item) => {
      const budget = budgetOf(item);
      return budget && budgetStatus(subject, budget, spendOf(item, at), at);
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
    await this.write(subject, true, [update(listingKey(accountId, subject)), update(subjectKey(accountId, subject))]);
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
        remove(subjectKey(accountId, subject)),
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
    const items = await itemsUnderPrefix(this.doc, {
      table: this.table,
      accountId,
      prefix: BUDGET_PREFIX[kind],
      filter: { expression: 'attribute_exists(limit_nanos)' },
      consistentRead: true,
    });
    const statuses = items.map(async (item) => {
      const subject = subjectOf(item);
      const budget = budgetOf(item);
      if (!subject || !budget) return undefined;
      const spendItem = await this.reads.get(subjectKey(accountId, subject));
      return budgetStatus(subject, budget, spendOf(spendItem, at), at);
    });
    return (await Promise.all(statuses)).filter((s): s is BudgetStatus => s !== undefined);
  }
}
