import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeError, type Logger } from '../base/logger';
import type { UsageRow } from './usage-row';

/** Where a row goes when the store refused it after every retry: never dropped silently. */
export interface RowSpool {
  keep(row: UsageRow, error: unknown): Promise<void>;
  /** Writes kept rows back while the process runs (`writeOnce` makes one attempt); a spool that can't read its rows back ignores it. */
  startReplay(writeOnce: (row: UsageRow) => Promise<void>): void;
  /** Suspends the replay; the rows not yet written stay kept for the next start. */
  stop(): Promise<void>;
}

/**
 * In Lambda there is no disk that outlives the instance: the row is printed as
 * one structured log line (`"message":"usage row spooled"`) that the operator can
 * replay into the table from CloudWatch Logs (docs/failure-modes.md, "Limits worth knowing").
 */
export class LogRowSpool implements RowSpool {
  constructor(private readonly log: Logger) {}

  async keep(row: UsageRow, error: unknown): Promise<void> {
    this.log.error('usage row spooled', { row, ...describeError(error) });
  }

  /** The replay is the operator's, from the log (docs/failure-modes.md). */
  startReplay(): void {}

  async stop(): Promise<void> {}
}

/**
 * The local server keeps refused rows in a bounded JSON-lines file under
 * DATA_DIR and writes them back when the store answers again.
 *
 * Replay is crash-safe: the file is first renamed to `….replaying` (new refusals go to a new
 * file meanwhile); a `.replaying` file left by a run that stopped mid-replay is replayed before
 * anything newer; the writer skips rows already stored, so replaying a row twice stores it once.
 * Only when every row is written or handed back to the spool is the claimed file removed.
 */
export class FileRowSpool implements RowSpool {
  private timer?: NodeJS.Timeout;
  /** Rows in the file, counted once at start and then kept up to date (no re-reading per row). */
  private rows?: number;
  private running?: Promise<number>;
  private stopping = false;

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
    this.log.warn('usage row spooled to disk; it will be written when the store answers', {
      request_id: row.id,
      ...describeError(error),
    });
  }

  /**
   * Replays at once (rows left by an earlier run go first), then every `intervalMs`, one replay
   * at a time. `writeOnce` makes a single attempt and skips a row the store already holds.
   */
  startReplay(writeOnce: (row: UsageRow) => Promise<void>, intervalMs = 5_000): void {
    const tick = () => {
      if (this.running || this.stopping) return;
      this.running = this.replay(writeOnce)
        .catch((error) => (this.log.warn('spooled usage rows not replayed yet', describeError(error)), 0))
        .finally(() => (this.running = undefined));
    };
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  /** Suspends replaying: the row being written finishes, the rest go back to the spool for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  async replay(writeOnce: (row: UsageRow) => Promise<void>): Promise<number> {
    const claimed = `${this.path}.replaying`;
    if (!existsSync(claimed)) {
      if (!existsSync(this.path)) return 0;
      renameSync(this.path, claimed);
      this.rows = undefined;
    }
    const rows = readRows(claimed);
    const left: UsageRow[] = [];
    let written = 0;
    for (const row of rows) {
      if (this.stopping) {
        left.push(row);
        continue;
      }
      try {
        await writeOnce(row);
        written++;
      } catch {
        left.push(row);
      }
    }
    // Handed back before the claim is dropped: a stop between the two replays them again, harmlessly.
    if (left.length) appendFileSync(this.path, left.map((row) => JSON.stringify(row) + '\n').join(''));
    rmSync(claimed);
    this.rows = undefined;
    if (written) this.log.info('spooled usage rows written', { rows: written, left: left.length });
    return written;
  }

  private count(): number {
    this.rows ??= existsSync(this.path) ? readFileSync(this.path, 'utf8').split('\n').length - 1 : 0;
    return this.rows;
  }
}

/** The rows of a spool file; a line torn by a crash mid-append is skipped. */
function readRows(path: string): UsageRow[] {
  const rows: UsageRow[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      rows.push(JSON.parse(line) as UsageRow);
    } catch {
      // Only the last line can be torn, and its row was never acknowledged to anyone.
    }
  }
  return rows;
}
