import { chmodSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The local data folder holds the admin key, the master key, provider keys (sealed) and every
 * usage row: only its owner may read it (docs/operations.md). A process that writes there first
 * calls `keepDataPrivate`: from then on every folder it or its children (DynamoDB Local's Java)
 * create is 0700 and every file 0600, and what an earlier version left readable is tightened.
 */
export function keepDataPrivate(dataDir: string): void {
  process.umask(0o077);
  if (existsSync(dataDir)) tighten(dataDir);
}

function tighten(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) tighten(path);
    else if (entry.isFile()) chmodSync(path, 0o600);
  }
}

/**
 * A start that fails before it owns the port and the store leaves DATA_DIR as it was: a folder
 * this start created is removed again, so the next start is a first start.
 */
export function dataDirGuard(dataDir: string): { release(): void; undo(): void } {
  const existed = existsSync(dataDir);
  let kept = existed;
  return {
    /** The start got far enough that its data is real (the port and the store are its own). */
    release: () => {
      kept = true;
    },
    undo: () => {
      if (!kept) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
