import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDynamoDbLocal } from '../../lambda/local/dynamodb-local';

const ROOT = resolve(__dirname, '../..');

/**
 * Before the integration project's first test: the bundles its tests run (the local server, the
 * Lambda entry) are built from the current source, while one DynamoDB Local per worker
 * starts for the whole run (worker-store.cjs gives each worker its own); every test file isolates
 * itself with its own table prefix. Workers inherit DYNAMODB_ENDPOINTS. The unit project needs
 * neither (jest.config.js).
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  // The SDK versions are pinned in the lock file; its notice about releases after January 2027 is noise in test output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // The suite starts the same bundles (the local server, the consumers) over a hundred times: Node's
  // compile cache keeps V8's compiled code of them from one start to the next (a fifth of a start's
  // CPU). Not under `npm run coverage`, whose counts come from V8 compiling as it runs.
  if (!process.env.NODE_V8_COVERAGE) process.env.NODE_COMPILE_CACHE ??= join(ROOT, 'node_modules/.cache/node-compile');
  const workers = Math.max(1, globalConfig.maxWorkers);
  // On disk rather than in memory, so that each store's stream records get their index
  // (dynamodb-local.ts); in a memory-backed folder where the system has one.
  const folders = process.env.DYNAMODB_ENDPOINT
    ? []
    : Array.from({ length: workers }, () =>
        mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'store-')),
      );
  const stores = folders.map((folder) => startDynamoDbLocal(folder));
  const started = Promise.allSettled(stores);
  const stopAll = async () => {
    for (const outcome of await started) if (outcome.status === 'fulfilled') await outcome.value.stop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  };
  const built = build().catch(async (error: unknown) => {
    await stopAll();
    throw error;
  });
  const locals = await Promise.all(stores).catch(async (error: unknown) => {
    await stopAll();
    throw error;
  });
  await built;
  if (locals.length === 0) return;
  process.env.DYNAMODB_ENDPOINTS = locals.map((local) => local.endpoint).join(',');
  process.env.DYNAMODB_ENDPOINT = locals[0]!.endpoint;
  (globalThis as { __stopDynamoDbLocal?: () => Promise<void> }).__stopDynamoDbLocal = stopAll;
}

/** `node scripts/build.mjs`, its output shown as it would be from the command line. */
function build(): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['scripts/build.mjs'], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`scripts/build.mjs exited with ${code}`))));
  });
}
