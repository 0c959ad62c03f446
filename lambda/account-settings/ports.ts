import type { AccountFailover } from './failover-settings';

/** An account's failover settings: one item per account. */
export interface AccountSettingsStore {
  /** The settings, or none set (`NO_FAILOVER_SETTINGS`). */
  get(accountId: string): Promise<AccountFailover>;
  /**
   * Applies `edit` to the settings as stored and stores what it returns, unless another change came
   * in between (then it is applied again to that). `edit` may throw to refuse the change.
   */
  update(
    accountId: string,
    edit: (current: AccountFailover) => AccountFailover,
  ): Promise<{ before: AccountFailover; after: AccountFailover }>;
}
