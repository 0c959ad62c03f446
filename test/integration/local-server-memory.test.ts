/**
 * `npm start` bounds V8's heap with Node flags of its own (docs/operations.md, "Memory"): the server it starts
 * runs with them, and V8 honours them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { untilPrinted } from '../support/patience';

const ROOT = resolve(__dirname, '../..');
const START_SCRIPT = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } })
  .scripts.start;
/** The Node flags the start script gives the server: `node --a --b dist/local/server.mjs`. */
const START_FLAGS = (/node((?:\s+--\S+)*)\s+dist\/local\/server\.mjs/.exec(START_SCRIPT)?.[1] ?? '')
  .trim()
  .split(/\s+/)
  .filter(Boolean);

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** The node process a shell started for a command: the shell itself when it exec'd node, else its child. */
function nodeProcessOf(shellPid: number): number | undefined {
  if (cmdline(shellPid)[0]?.endsWith('node')) return shellPid;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === shellPid && cmdline(Number(entry))[0]?.endsWith('node')) return Number(entry);
    } catch {
      // Processes come and go while the list is read.
    }
  }
  return undefined;
}

/** The size V8 gave its young generation after a churn of short-lived objects, under the given flags. */
function youngGenerationMb(flags: string[]): number {
  const churn = `
    const v8 = require('node:v8');
    const kept = [];
    for (let i = 0; i < 3e6; i++) { const o = { i, s: 'x' + i, a: [i] }; if (i % 50 === 0) kept.push(o); if (kept.length > 20000) kept.splice(0, 10000); }
    process.stdout.write(String(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576));`;
  const run = spawnSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return Number(run.stdout);
}

describe("npm start's Node flags", () => {
  it('the server npm start launches runs with a bounded young generation and a bounded old-generation growth', async () => {
    // The start script runs its line through scripts/on-node-22.sh; the server is its last command.
    const serverCommand = /node(?:\s+--\S+)*\s+dist\/local\/server\.mjs/.exec(START_SCRIPT)?.[0] ?? '';
    expect(serverCommand).toMatch(/dist\/local\/server\.mjs$/);
    const dataDir = mkdtempSync(join(tmpdir(), 'memory-flags-'));
    // The command as npm runs it: through the shell, from the project's folder.
    const shell = spawn('sh', ['-c', serverCommand], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        ADMIN_KEY: `admin-${randomBytes(8).toString('hex')}`,
        TABLE_PREFIX: `mf${randomBytes(4).toString('hex')}-`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    shell.stdout!.on('data', (chunk) => (output += String(chunk)));
    shell.stderr!.on('data', (chunk) => (output += String(chunk)));
    const exited = new Promise<void>((done) => shell.once('exit', () => done()));
    try {
      await untilPrinted(shell, () => output, /listening on http/, 'server');
      const pid = nodeProcessOf(shell.pid!);
      expect(pid).toBeDefined();
      const args = cmdline(pid!);
      const flags = args.slice(
        1,
        args.findIndex((arg) => arg.endsWith('dist/local/server.mjs')),
      );
      expect(flags).toEqual(expect.arrayContaining(['--max-semi-space-size=4', '--heap-growing-percent=50']));
      expect(START_FLAGS).toEqual(flags);
    } finally {
      if (shell.exitCode === null) {
        const pid = nodeProcessOf(shell.pid!);
        if (pid) process.kill(pid, 'SIGTERM');
      }
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('V8 keeps the young generation within 2 × the semi-space flag, where its default lets it grow beyond', () => {
    const semiSpaceMb = Number(/--max-semi-space-size=(\d+)/.exec(START_FLAGS.join(' '))?.[1]);
    expect(youngGenerationMb(START_FLAGS)).toBeLessThanOrEqual(2 * semiSpaceMb);
    expect(youngGenerationMb([])).toBeGreaterThan(2 * semiSpaceMb);
  });
});
