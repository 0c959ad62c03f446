import type { Budget, BudgetStatus, BudgetSubject } from './budget';

/**
 * Spend limits per proxy token and per requester label, with the spend
 * counters they are checked against (docs/budgets.md). The counters are
 * added to by the usage log, in the same write as each row.
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
