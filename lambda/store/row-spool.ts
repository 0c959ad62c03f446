import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeError, type Logger } from '../logger';
import type { UsageRow } from './usage-row';

/** Where a row goes when the store refused it after every retry: never dropped silently. */
export interface RowSpool {
  keep(row: UsageRow, error: unknown): Promise<void>;
}

/**
 * In Lambda there is no disk that outlives the instance: the row is printed as
 * one structured log line (`"message":"usage row spooled"`) that the operator can
 * replay into the table from CloudWatch Logs (see README, failure modes).
 */
export class LogRowSpool implements RowSpool {
  constructor(private readonly log: Logger) {}

  async keep(row: UsageRow, error: unknown): Promise<void> {
    this.log.error('usage row spooled', { row, ...describeError(error) });
  }
}

/**
 * The local server keeps refused rows in a bounded JSON-lines file under
 * DATA_DIR and writes them back when the store answers again.
 */
export class FileRowSpool implements RowSpool {
  private timer?: NodeJS.Timeout;
  /** Rows in the file, counted once at start and then kept up to date (no re-reading per row). */
  private rows?: number;

  constructor(
    private readonly path: string,
    private readonly log: Logger,
    private readonly maxRows = 100_000,
  ) {}

  async keep(row: UsageRow, error: unknown): Promise<void> {
    mkdirSync(dirname(this.path), { recursive: true });
    if (this.count() >= this.maxRows) {
      this.log.error('usage row spool is full; row printed instead', { row, ...describeError(error) });
      return;
    }
    appendFileSync(this.path, JSON.stringify(row) + '\n');
    this.rows = this.count() + 1;
    this.log.warn('usage row spooled to disk; it will be written when the store answers', { request_id: row.id, ...describeError(error) });
  }

  /** Tries to write spooled rows back every `intervalMs` (with the row writer's single attempt). */
  startReplay(writeOnce: (row: UsageRow) => Promise<void>, intervalMs = 5_000): void {
    this.timer = setInterval(() => void this.replay(writeOnce).catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async replay(writeOnce: (row: UsageRow) => Promise<void>): Promise<number> {
    if (!existsSync(this.path)) return 0;
    const claimed = `${this.path}.replaying`;
    renameSync(this.path, claimed);
    const rows = readFileSync(claimed, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as UsageRow);
    let written = 0;
    for (const row of rows) {
      try {
        await writeOnce(row);
        written++;
      } catch {
        appendFileSync(this.path, JSON.stringify(row) + '\n');
      }
    }
    rmSync(claimed);
    this.rows = undefined;
    if (written) this.log.info('spooled usage rows written', { rows: written });
    return written;
  }

  private count(): number {
    this.rows ??= existsSync(this.path) ? readFileSync(this.path, 'utf8').split('\n').length - 1 : 0;
    return this.rows;
  }
}
