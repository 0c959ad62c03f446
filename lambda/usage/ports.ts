import type { UsageRow } from './usage-row';

/**
 * What recording a usage row needs of the other stores, declared here so that
 * `usage/` depends on no storage module: the adapters in `store/` satisfy these
 * (`BudgetStore`, `AccountStore`) and `deps.ts` passes them in.
 */
export interface SpendCounter {
  /** Adds a stored row's cost to its budgets' spend. Not idempotent: add each row once. */
  addSpend(row: UsageRow): Promise<void>;
}

export interface TokenToucher {
  touchToken(accountId: string, tokenId: string, usedAt: string): Promise<void>;
}
