/**
 * The cold-start proxy: the Lambda bundle's size, and how long a fresh Node
 * process takes to import it (the handler builds its dependencies at import).
 * Lambda's runtime global is shimmed first, as the runtime itself provides it,
 * and the store points at a closed port: building clients makes no connection.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { median } from './stats';

export interface ColdStart {
  bundleBytes: number;
  bundleGzipBytes: number;
  importMs: number[];
  importMedianMs: number;
  /** Process start to handler imported, as `node -e` sees it (includes Node's own start-up). */
  processMedianMs: number;
}

function importOnce(bundle: string, dataDir: string): Promise<{ importMs: number; processMs: number }> {
  const code = `
globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
const started = performance.now();
await import(${JSON.stringify(pathToFileURL(bundle).href)});
const importMs = performance.now() - started;
process.stdout.write(JSON.stringify({ importMs, processMs: performance.now() }));
process.exit(0);`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
    DATA_DIR: dataDir,
    AWS_REGION: 'eu-west-1',
    ADMIN_KEY: 'bench-cold-start-admin-key-0123456789',
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    child.stderr.on('data', (chunk) => (err += String(chunk)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(out) as { importMs: number; processMs: number });
      } catch (error) {
        reject(new Error(`importing the bundle failed (${(error as Error).message}): ${err.slice(0, 800)}`));
      }
    });
  });
}

export async function measureColdStart(bundle: string, runs: number): Promise<ColdStart> {
  const bytes = readFileSync(bundle);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-cold-'));
  const importMs: number[] = [];
  const processMs: number[] = [];
  try {
    // One unmeasured run: the first read of the file from disk is not what Lambda's warm page cache sees.
    await importOnce(bundle, dataDir);
    for (let i = 0; i < runs; i++) {
      const run = await importOnce(bundle, dataDir);
      importMs.push(run.importMs);
      processMs.push(run.processMs);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    bundleBytes: statSync(bundle).size,
    bundleGzipBytes: gzipSync(bytes, { level: 9 }).length,
    importMs,
    importMedianMs: median(importMs),
    processMedianMs: median(processMs),
  };
}
