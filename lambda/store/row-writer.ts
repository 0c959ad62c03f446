import { describeError, type Logger } from '../logger';
import { withRetries } from '../retry';
import type { RowSpool } from './row-spool';
import type { TokenUseTracker } from './token-use';
import type { UsageLog, UsageRow } from './usage-row';
import type { UsageStats } from './usage-stats';

const RETRY_DELAYS_MS = [50, 200, 800, 2_000, 5_000];

/**
 * Writes one usage row durably: retried with backoff (the write is idempotent),
 * rolled up into the stats once, after the row is stored, and handed to the
 * spool if the store still refuses. A row is never dropped silently.
 */
export class RowWriter {
  constructor(
    private readonly usageLog: UsageLog,
    private readonly usageStats: UsageStats,
    private readonly spool: RowSpool,
    private readonly tokenUse: TokenUseTracker,
    private readonly log: Logger,
  ) {}

  async write(row: UsageRow): Promise<void> {
    try {
      await this.writeWithRetries(row);
    } catch (error) {
      await this.spool.keep(row, error);
      return;
    }
    await this.afterWrite(row);
  }

  /** One attempt, for replaying spooled rows: throws if the store still refuses. */
  async writeOnce(row: UsageRow): Promise<void> {
    await this.usageLog.write(row);
    await this.afterWrite(row);
  }

  private writeWithRetries(row: UsageRow): Promise<void> {
    return withRetries(() => this.usageLog.write(row), { attempts: RETRY_DELAYS_MS.length + 1, mayRetry: () => true, delayMs: (retry) => RETRY_DELAYS_MS[retry - 1]! });
  }

  private async afterWrite(row: UsageRow): Promise<void> {
    // A rollup update is not retried as a whole: one of its two ADDs may have landed, and a retry would count it twice.
    await this.usageStats.add(row).catch((error) => this.log.warn('usage rollup not updated', { request_id: row.id, ...describeError(error) }));
    await this.tokenUse.touch(row.account_id, row.token_id, row.ts);
  }
}
