import { closeSync, openSync, readSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * The lock that lets one server at a time replay a spool that several share (one `DATA_DIR`):
 * two replayers of one claimed file would each hand its unwritten rows back, and the spool would
 * grow by rows it already holds. The lock is a file created only if absent; it names its holder.
 * A lock whose holder is gone (a crash, SIGKILL) is taken over: on this machine when the holder's
 * process no longer exists, from another machine sharing the folder when the holder has not
 * refreshed it for `STALE_AFTER_MS`.
 */
export class ReplayLock {
  private held = false;
  private refreshedAt = 0;

  constructor(
    private readonly path: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the lock; false when another live server holds it. */
  take(): boolean {
    if (this.create()) return true;
    const holder = this.holder();
    if (holder && !isStale(holder, this.now())) return false;
    // A gone holder's lock is removed and taken anew. Two servers finding it gone at the very same
    // moment could both succeed; that needs a crash first, and costs at most one doubled hand-back.
    rmSync(this.path, { force: true });
    return this.create();
  }

  /** Tells other servers the holder is still at work (at most every few seconds). */
  refresh(): void {
    const now = this.now();
    if (!this.held || now - this.refreshedAt < REFRESH_EVERY_MS) return;
    this.refreshedAt = now;
    const at = new Date(now);
    utimesSync(this.path, at, at);
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    rmSync(this.path, { force: true });
  }

  private create(): boolean {
    try {
      writeFileSync(this.path, JSON.stringify({ pid: process.pid, host: hostname() }), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
    this.held = true;
    this.refreshedAt = this.now();
    return true;
  }

  private holder(): Holder | undefined {
    try {
      const { pid, host } = JSON.parse(readText(this.path)) as { pid?: unknown; host?: unknown };
      const { mtimeMs } = statSync(this.path);
      return typeof pid === 'number' && typeof host === 'string' ? { pid, host, refreshedAt: mtimeMs } : undefined;
    } catch {
      // Unreadable (torn by a crash while being written) or just released: treated as gone.
      return undefined;
    }
  }
}

/** A holder refreshes its lock this often while it replays... */
const REFRESH_EVERY_MS = 5_000;
/** ...so one silent this long, on another machine, has stopped (a row's write gives up within seconds). */
export const STALE_AFTER_MS = 120_000;

interface Holder {
  pid: number;
  host: string;
  refreshedAt: number;
}

function isStale(holder: Holder, now: number): boolean {
  if (holder.host !== hostname()) return now - holder.refreshedAt > STALE_AFTER_MS;
  // This process never holds a lock it does not know of: one with its id is a former process's.
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function readText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(512);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Lines of files that only grow between being replaced (the spool, a claimed spool), counted
 * without reading a file again: when one has grown, only its new bytes are read, so servers
 * appending to one spool each see the others' rows in the count.
 */
export class LineCounts {
  private readonly known = new Map<string, { ino: number; size: number; lines: number }>();

  count(path: string): number {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      this.known.delete(path);
      return 0;
    }
    const before = this.known.get(path);
    const from = before && before.ino === stat.ino && before.size <= stat.size ? before : { size: 0, lines: 0 };
    const lines = from.lines + newlinesIn(path, from.size, stat.size);
    this.known.set(path, { ino: stat.ino, size: stat.size, lines });
    return lines;
  }
}

function newlinesIn(path: string, from: number, to: number): number {
  if (to <= from) return 0;
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(1 << 20, to - from));
    let lines = 0;
    for (let at = from; at < to;) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, to - at), at);
      if (read === 0) break;
      for (let i = 0; i < read; i++) if (buffer[i] === 0x0a) lines++;
      at += read;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}
