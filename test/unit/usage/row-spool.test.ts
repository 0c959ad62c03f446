/**
 * The local spool's replay beat: the next pass waits a full interval from the end of the last one.
 * With a beat fixed from the start, a server whose passes ended just before its own next beat took
 * the shared spool's lock pass after pass, and another server sharing it never got a turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../lambda/base/logger';
import { FileRowSpool } from '../../../lambda/usage/row-spool';
import type { UsageRow } from '../../../lambda/usage/usage-row';

const INTERVAL_MS = 5_000;
const REFUSAL_TAKES_MS = 2_000;
const quiet: Logger = { info() {}, warn() {}, error() {} };

let dir: string;
let spool: FileRowSpool;
beforeEach(() => {
  jest.useFakeTimers({ now: 0 });
  dir = mkdtempSync(join(tmpdir(), 'row-spool-'));
  spool = new FileRowSpool(join(dir, 'row-spool.jsonl'), quiet);
});
afterEach(async () => {
  const stopped = spool.stop();
  await jest.advanceTimersByTimeAsync(REFUSAL_TAKES_MS);
  await stopped;
  jest.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

/** A store that refuses each write after `REFUSAL_TAKES_MS`, noting when each attempt began. */
function refusingStore(): { attemptsAt: number[]; writeOnce: (row: UsageRow) => Promise<void> } {
  const attemptsAt: number[] = [];
  const writeOnce = () => {
    attemptsAt.push(Date.now());
    return new Promise<void>((_, reject) =>
      setTimeout(() => reject(new Error('the store refused the row')), REFUSAL_TAKES_MS),
    );
  };
  return { attemptsAt, writeOnce };
}

test('after a refused pass the next one starts a full interval after it ended, not on a fixed beat', async () => {
  await spool.keep({ id: 'row-1' } as UsageRow, new Error('store down'));
  const store = refusingStore();
  spool.startReplay(store.writeOnce, INTERVAL_MS);
  await jest.advanceTimersByTimeAsync(20_000);
  const pass = INTERVAL_MS + REFUSAL_TAKES_MS;
  expect(store.attemptsAt).toEqual([0, pass, 2 * pass]);
});

test('a stopped spool starts no further pass', async () => {
  await spool.keep({ id: 'row-1' } as UsageRow, new Error('store down'));
  const store = refusingStore();
  spool.startReplay(store.writeOnce, INTERVAL_MS);
  const stopped = spool.stop();
  await jest.advanceTimersByTimeAsync(REFUSAL_TAKES_MS);
  await stopped;
  await jest.advanceTimersByTimeAsync(60_000);
  expect(store.attemptsAt).toEqual([0]);
});
