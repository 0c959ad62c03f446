/**
 * The usage-stream fold as its own process (dist/local/stats-consumer.mjs), the local stand-in for
 * the consumer Lambda, so a test can kill it mid-run and start it again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { untilPrinted } from '../../support/patience';

const ROOT = resolve(__dirname, '../../..');

export interface StatsConsumerProcess {
  child: ChildProcess;
  output(): string;
  /** SIGKILL: no chance to finish a batch or save its checkpoint. */
  kill(): Promise<void>;
}

export async function startStatsConsumer(
  tablePrefix: string,
  dataDir = mkdtempSync(join(tmpdir(), 'stats-consumer-')),
  env: Record<string, string> = {},
): Promise<StatsConsumerProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/local/stats-consumer.mjs')], {
    cwd: ROOT,
    env: { ...process.env, TABLE_PREFIX: tablePrefix, DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  await untilPrinted(child, () => output, /stats consumer folding/, 'stats consumer');
  return {
    child,
    output: () => output,
    kill: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGKILL');
      }),
  };
}
