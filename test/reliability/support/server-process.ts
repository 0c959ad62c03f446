/**
 * The built local server as a child process the test controls directly (its
 * signals and exit code), for the shutdown test. Everything else uses
 * test/support/proxy-server.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { untilPrinted } from '../../support/patience';

const ROOT = resolve(__dirname, '../../..');

export interface ServerProcess {
  url: string;
  adminKey: string;
  tablePrefix: string;
  dataDir: string;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  cleanUp(): void;
}

export interface SpawnOptions {
  /** Its own process group (as a terminal's foreground job): a signal to `-pid` reaches the whole group. */
  detached?: boolean;
  /** Reuse a data directory (a restart); otherwise a new one. */
  dataDir?: string;
  tablePrefix?: string;
}

export async function spawnServer(env: Record<string, string>, options: SpawnOptions = {}): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'proxy-shutdown-'));
  const adminKey = `admin-test-${randomBytes(16).toString('hex')}`;
  const tablePrefix = options.tablePrefix ?? `sd${randomBytes(4).toString('hex')}-`;
  const child = spawn(process.execPath, [join(ROOT, 'dist/local/server.mjs')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_KEY: adminKey,
      TABLE_PREFIX: tablePrefix,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const [, url] = await untilPrinted(child, () => output, /listening on (http:\/\/[\d.:]+)/, 'server');
  return {
    url,
    adminKey,
    tablePrefix,
    dataDir,
    child,
    output: () => output,
    exited,
    cleanUp() {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
