/**
 * CPU time and memory of another process, read from /proc (Linux): the figures
 * are the kernel's own accounting of the proxy process, not the load generator's view.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time of `pid` so far, in ms (resolution: one clock tick, usually 10 ms). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name is in parentheses and may hold spaces; the fields after it are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / clockTicks();
}

/** Resident memory now and its peak so far, in MB. */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Samples a process's RSS on a timer; `stop()` returns the highest value seen. */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let max = 0;
  const take = () => {
    try {
      max = Math.max(max, memoryMb(pid).rss);
    } catch {
      // The process has gone; keep what was seen.
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return max;
    },
  };
}

/** The pid of the java process serving DynamoDB Local on `port` (found by its command line). */
export function findDynamoDbLocalPid(port: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const portIndex = args.indexOf('-port');
      if (portIndex >= 0 && args[portIndex + 1] === String(port) && args.some((arg) => arg.endsWith('DynamoDBLocal.jar'))) return Number(entry);
    } catch {
      // Processes come and go while the list is read.
    }
  }
  return undefined;
}

export function machineDescription(): { nproc: string; memory: string; cpu: string; node: string; os: string } {
  // Only trailing whitespace is dropped: `free -h` aligns its header with leading spaces.
  const run = (cmd: string, args: string[]) => {
    try {
      return execFileSync(cmd, args, { encoding: 'utf8' }).trimEnd();
    } catch {
      return 'unknown';
    }
  };
  const cpuInfo = (() => {
    try {
      return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
    } catch {
      return 'unknown';
    }
  })();
  return { nproc: run('nproc', []), memory: run('free', ['-h']), cpu: cpuInfo, node: process.version, os: run('uname', ['-sr']) };
}

/**
 * The commit the run measured, and the files that differed from it when the run started
 * (read-only git queries). A run on a clean tree measured exactly that commit.
 */
export function sourceDescription(): { commit: string; clean: boolean; changed: string[] } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=normal'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => line.slice(3));
    return { commit, clean: changed.length === 0, changed: changed.slice(0, 50) };
  } catch {
    return { commit: 'unknown (not a git checkout)', clean: false, changed: [] };
  }
}
