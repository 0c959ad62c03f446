import type { Budget, BudgetStatus, BudgetSubject } from './budget';
import type { StreamedRow } from '../usage/rollups/fold';
import type { FoldOutcome } from '../usage/usage-stats';

/**
 * Spend limits per proxy token, requester label and tag value, with the spend counters they are
 * checked against (docs/budgets.md). The counters are added to by the spend fold, from the
 * usage-logs stream, after each row is stored.
 */
export interface BudgetStore {
  /** One subject's budget with its spend at `at`; undefined when it has none. */
  statusOf(accountId: string, subject: BudgetSubject, at: number): Promise<BudgetStatus | undefined>;
  setBudget(accountId: string, subject: BudgetSubject, budget: Budget, updatedAt: string): Promise<void>;
  /** False when the subject had no budget. */
  removeBudget(accountId: string, subject: BudgetSubject): Promise<boolean>;
  /** Every budget of one kind in the account, with its current spend. */
  listBudgets(accountId: string, kind: BudgetSubject['kind'], at: number): Promise<BudgetStatus[]>;
}

/**
 * Adds the cost of streamed usage rows to the spend of their token, requester and tags, whether
 * or not a budget is set (a budget set later sees what was already spent). Idempotent: rows
 * delivered again (a retried or split batch, a second consumer) are not counted twice.
 */
export interface SpendFold {
  fold(rows: StreamedRow[]): Promise<FoldOutcome>;
}
