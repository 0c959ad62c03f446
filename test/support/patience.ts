import type { ChildProcess } from 'node:child_process';

/**
 * How long tests wait for what should happen soon. Every wait that uses these polls its condition
 * and returns as soon as it holds, so on a quiet machine a long limit costs nothing. They are long
 * because on a loaded one (CI sharing the machine: load average 20 and more on 2 cores) the same
 * work takes many times as long, and a tight limit fails a correct build. A test that shows
 * something does *not* happen names its own, short, watching time instead.
 */

/** Something the server does just after a response or in the background: a row written, rollups folded, a spend added. */
export const EVENTUALLY_MS = 60_000;

/** A real process starting until it serves: the built server (with its tables), DynamoDB Local on Java. */
export const PROCESS_START_MS = 180_000;

/** Between the first probes: most conditions hold within a few of them. */
const FIRST_PAUSE_MS = 50;
/** The longest pause between probes: a condition that takes seconds is probed twice a second. */
const LONGEST_PAUSE_MS = 500;

/**
 * Polls `probe` until it returns something other than undefined, or the limit passes (then
 * undefined). Without `intervalMs`, the pause grows by half each time from 50 ms to 500 ms: a
 * probe is often a call to the server under test (a page of rows, the overview), and a wait of
 * seconds at a fixed short pause was most of the store's and the server's work in the suite.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  limitMs = EVENTUALLY_MS,
  intervalMs?: number,
): Promise<T | undefined> {
  const deadline = Date.now() + limitMs;
  let pause = intervalMs ?? FIRST_PAUSE_MS;
  for (;;) {
    const found = await probe();
    if (found !== undefined || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, pause));
    if (intervalMs === undefined) pause = Math.min(pause * 1.5, LONGEST_PAUSE_MS);
  }
}

/**
 * Waits until what a child process has printed (`printed()`) matches `pattern` and resolves with
 * the match; fails when the process exits first or after PROCESS_START_MS. Every way out clears the
 * timer and the listeners, so a process that refuses to start leaves nothing that keeps the test's
 * worker alive.
 */
export function untilPrinted(
  child: ChildProcess,
  printed: () => string,
  pattern: RegExp,
  what: string,
): Promise<RegExpExecArray> {
  return new Promise((done, fail) => {
    const settle = (finish: () => void) => {
      clearTimeout(timer);
      child.stdout!.off('data', check);
      child.off('exit', exited);
      finish();
    };
    const check = () => {
      const match = pattern.exec(printed());
      if (match) settle(() => done(match));
    };
    const exited = (code: number | null) => settle(() => fail(new Error(`${what} exited with ${code}:\n${printed()}`)));
    const timer = setTimeout(
      () => settle(() => fail(new Error(`${what} did not start:\n${printed()}`))),
      PROCESS_START_MS,
    );
    child.stdout!.on('data', check);
    child.once('exit', exited);
    // It may have printed the line before this wait began.
    check();
  });
}
