import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { startDynamoDbLocal } from '../../lambda/local/dynamodb-local';

const ROOT = resolve(__dirname, '../..');

/**
 * Before the integration project's first test: the bundles its tests run (the local server, the
 * Lambda entry) are built from the current source, while one in-memory DynamoDB Local starts for
 * the whole run; every test file isolates itself with its own table prefix. Workers inherit
 * DYNAMODB_ENDPOINT. The unit project needs neither (jest.config.js).
 */
export default async function globalSetup(): Promise<void> {
  // The SDK versions are pinned in the lock file; its notice about releases after January 2027 is noise in test output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const store = process.env.DYNAMODB_ENDPOINT ? undefined : startDynamoDbLocal();
  const built = build().catch(async (error: unknown) => {
    await (await store)?.stop();
    throw error;
  });
  const local = await store;
  await built;
  if (!local) return;
  process.env.DYNAMODB_ENDPOINT = local.endpoint;
  (globalThis as { __stopDynamoDbLocal?: () => Promise<void> }).__stopDynamoDbLocal = local.stop;
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
