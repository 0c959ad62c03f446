import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeError, type Logger } from '../base/logger';
import { LineCounts, ReplayLock } from './spool-files';
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
 * file meanwhile); the rows the store still refuses, or a stop leaves unwritten, stay in that
 * claimed file, which the next pass (or the next start) replays before anything newer; the writer
 * skips rows already stored, so replaying a row twice stores it once. The claimed file is removed
 * once every row in it is written.
 *
 * Servers sharing one DATA_DIR share the spool: each appends its own refusals, and one at a time
 * replays (`ReplayLock`), so no row is ever claimed, or written back to disk, twice. The cap counts every row
 * waiting, the spool's and the claimed file's, whoever wrote them.
 */
export class FileRowSpool implements RowSpool {
  private timer?: NodeJS.Timeout;
  private readonly lines = new LineCounts();
  private readonly lock: ReplayLock;
  private readonly claimed: string;
  private running?: Promise<number>;
  private stopping = false;

  constructor(
    private readonly path: string,
    private readonly log: Logger,
    private readonly maxRows = 100_000,
  ) {
    this.lock = new ReplayLock(`${path}.lock`);
    this.claimed = `${path}.replaying`;
  }

  async keep(row: UsageRow, error: unknown): Promise<void> {
    mkdirSync(dirname(this.path), { recursive: true });
    if (this.waiting() >= this.maxRows) {
      this.log.error('usage row spool is full; row printed instead', { row, ...describeError(error) });
      return;
    }
    appendFileSync(this.path, JSON.stringify(row) + '\n');
    this.log.warn('usage row spooled to disk; it will be written when the store answers', {
      request_id: row.id,
      ...describeError(error),
    });
  }

  /**
   * Replays at once (rows left by an earlier run go first), then again `intervalMs` after each pass
   * ends. `writeOnce` makes a single attempt and skips a row the store already holds.
   * The wait runs from a pass's end, also a pass that found another server replaying: a server that
   * has just replayed waits longer than one that was turned away meanwhile, so servers sharing the
   * spool take turns (with a fixed beat, the one whose beat followed its own passes kept the lock).
   */
  startReplay(writeOnce: (row: UsageRow) => Promise<void>, intervalMs = 5_000): void {
    const pass = () => {
      this.running = this.replay(writeOnce)
        .catch((error) => (this.log.warn('spooled usage rows not replayed yet', describeError(error)), 0))
        .finally(() => {
          this.running = undefined;
          if (this.stopping) return;
          this.timer = setTimeout(pass, intervalMs);
          this.timer.unref();
        });
    };
    if (!this.stopping) pass();
  }

  /** Suspends replaying: the row being written finishes, the rest stay claimed for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass over the spool, unless another server sharing it is replaying it now. */
  async replay(writeOnce: (row: UsageRow) => Promise<void>): Promise<number> {
    if (!existsSync(this.claimed) && !existsSync(this.path)) return 0;
    if (!this.lock.take()) return 0;
    try {
      return await this.replayClaimed(writeOnce);
    } finally {
      this.lock.release();
    }
  }

  /**
   * Writes the claimed rows, claiming the spool's when none are (a claim left by an earlier run
   * goes first). Rows the store still refuses stay claimed for the next pass: the claimed file is
   * replaced by one holding only them, so a row is on disk once at every moment.
   */
  private async replayClaimed(writeOnce: (row: UsageRow) => Promise<void>): Promise<number> {
    let written = 0;
    while (!this.stopping) {
      if (!existsSync(this.claimed)) {
        if (!existsSync(this.path)) break;
        renameSync(this.path, this.claimed);
      }
      const rows = readRows(this.claimed);
      const left: UsageRow[] = [];
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
        this.lock.refresh();
      }
      if (!left.length) {
        rmSync(this.claimed);
        continue;
      }
      if (left.length < rows.length) {
        const next = `${this.claimed}.next`;
        writeFileSync(next, left.map((row) => JSON.stringify(row) + '\n').join(''));
        renameSync(next, this.claimed);
      }
      if (!this.stopping) this.log.info(WAITING_MESSAGE, { rows: left.length });
      break;
    }
    if (written) this.log.info('spooled usage rows written', { rows: written });
    return written;
  }

  /** Rows kept and not yet written, by every server sharing the spool. */
  private waiting(): number {
    return this.lines.count(this.path) + this.lines.count(this.claimed);
  }
}

/** Printed after a pass the store refused, so an operator sees the spool waiting (and a test can count the passes). */
export const WAITING_MESSAGE = 'spooled usage rows still waiting for the store';

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
