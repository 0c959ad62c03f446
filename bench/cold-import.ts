/**
 * A cold start's own part: a fresh Node process importing the Lambda bundle (the handler builds
 * its clients at import). Lambda's runtime global is shimmed first, as the runtime provides it,
 * and the store points at a closed port: building clients opens no connection.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function importOnce(bundle: string, dataDir: string): Promise<number> {
  const code = `
globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
const started = performance.now();
await import(${JSON.stringify(pathToFileURL(bundle).href)});
process.stdout.write(String(performance.now() - started));
process.exit(0);`;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
    DATA_DIR: dataDir,
    AWS_REGION: 'eu-west-1',
    ADMIN_KEY: 'bench-cold-import-admin-key-0123456789',
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    child.stderr.on('data', (chunk) => (err += String(chunk)));
    child.on('exit', (status) =>
      status === 0
        ? resolve(Number(out))
        : reject(new Error(`importing the Lambda bundle failed (${status}): ${err.slice(0, 800)}`)),
    );
  });
}

/** Import times, ms, of `count` fresh processes, one after another. */
export async function coldImports(bundle: string, count: number): Promise<number[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-cold-'));
  try {
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push(await importOnce(bundle, dataDir));
    return times;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
