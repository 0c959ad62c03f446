import { retryPolicies, withRetries } from '../base/retry';
import type { RowSpool } from './row-spool';
import type { UsageLog, UsageRow } from './usage-row';

/**
 * Writes one usage row durably: retried with backoff (the write, the row's
 * budget spend included, is idempotent), and handed to the spool if the store
 * still refuses. A row is never dropped silently.
 */
export class RowWriter {
  constructor(
    private readonly usageLog: UsageLog,
    private readonly spool: RowSpool,
  ) {}

  /** Rows between `write` being called and being stored or spooled. */
  private readonly unwritten = new Map<string, UsageRow>();

  async write(row: UsageRow): Promise<void> {
    this.unwritten.set(row.id, row);
    try {
      await this.writeWithRetries(row);
    } catch (error) {
      if (this.unwritten.has(row.id)) await this.spool.keep(row, error);
      return;
    } finally {
      this.unwritten.delete(row.id);
    }
  }

  /**
   * One attempt, for replaying spooled rows: throws if the store still refuses. A row the store
   * already holds (written just before a crash, or replayed before) is skipped, so it is neither
   * stored twice nor counted twice in the rollups.
   */
  async writeOnce(row: UsageRow): Promise<void> {
    if (await this.usageLog.find(row.account_id, row.id)) return;
    await this.usageLog.write(row);
  }

  /** Shutdown's last resort: rows still being retried go to the spool now (a replay skips any that land meanwhile). */
  async spoolUnwritten(): Promise<number> {
    const rows = [...this.unwritten.values()];
    this.unwritten.clear();
    for (const row of rows)
      await this.spool.keep(row, new Error('the server stopped before the store accepted this row'));
    return rows.length;
  }

  private writeWithRetries(row: UsageRow): Promise<void> {
    return withRetries(() => this.usageLog.write(row), retryPolicies.rowWrite());
  }
}
