/**
 * Peak memory of the built Lambda bundle under AWS's runtime interface client (as in
 * lambda-runtime.test.ts), serving the largest request a function URL accepts: a 6 MB body,
 * forwarded and answered, its row written. The process's high-water mark of resident memory
 * (VmHWM, what Lambda's "Max Memory Used" reports) decides the smallest memory setting the
 * function can have; docs/deploy.md states the figure this prints, and the stack's default
 * (lib/settings.ts) must leave headroom above it. The instance runs with the Node flags Lambda's
 * runtime passes at that memory (its heap sized from it, the collector exposed).
 * `LAMBDA_MEMORY_MB` measures another setting than the default (docs/deploy.md, "Memory").
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MAX_BODY_BYTES } from '../../lambda/http/request';
import { ALLOCATOR_ENVIRONMENT } from '../../lib/constructs/proxy-function';
import { DEFAULTS } from '../../lib/settings';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { createTestTables } from '../support/tables';
import { accountWithStoredKey, functionUrlEvent } from './support/lambda-account';
import {
  RIC_INSTALL_MS,
  runtimeInterfaceClientInstalled,
  startLambdaInstance,
  type LambdaInstance,
} from './support/lambda-instance';

const TASK_ROOT = resolve(__dirname, '../../dist/lambda');
/** What the runtime, the bundle and a 6 MB request may take of the default memory at most: the rest is headroom. */
const HEADROOM_SHARE = 0.75;
const MEMORY_MB = Number(process.env.LAMBDA_MEMORY_MB ?? DEFAULTS.memoryMb);

let fakes: AllFakes;
let dataDir: string;
let token: string;
let tables: Awaited<ReturnType<typeof createTestTables>>;
let instance: LambdaInstance;

// scripts/test-all.sh may still be compiling the runtime interface client.
beforeAll(runtimeInterfaceClientInstalled, RIC_INSTALL_MS);

beforeAll(async () => {
  fakes = await startAllFakes();
  tables = await createTestTables();
  dataDir = mkdtempSync(join(tmpdir(), 'lambda-memory-'));
  ({ token } = await accountWithStoredKey(tables, dataDir, 'memory', 'anthropic-stored-key-memory-1234'));
  instance = await startLambdaInstance({
    taskRoot: TASK_ROOT,
    handler: 'handler.handler',
    memoryMb: MEMORY_MB,
    env: {
      ...process.env,
      // What the stack sets on the function (lib/constructs/proxy-function.ts).
      ...ALLOCATOR_ENVIRONMENT,
      ...fakes.env,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_PREFIX: tables.prefix,
      DATA_DIR: dataDir,
      ADMIN_KEY: 'admin-key-for-the-lambda-memory-test',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      NODE_OPTIONS: process.env.MEMORY_NODE_OPTIONS ?? '',
    },
  });
});

afterAll(async () => {
  await instance?.stop();
  await fakes.close();
  rmSync(dataDir, { recursive: true, force: true });
  tables.clients.raw.destroy();
});

/** The process's peak resident memory so far, in MB (Linux: /proc/<pid>/status, VmHWM). */
function peakMb(): number {
  const status = readFileSync(`/proc/${instance.process.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

it(`serves 6 MB requests in under ${HEADROOM_SHARE * 100}% of the memory setting (${MEMORY_MB} MB), cold start included`, async () => {
  const request = (text: string, stream: boolean) =>
    functionUrlEvent(
      '/api/proxy/v1/messages',
      { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'x-proxy-user': 'memory-test' },
      { model: 'claude-sonnet-4-6', max_tokens: 64, stream, messages: [{ role: 'user', content: text }] },
    );
  // Just under the function URL's limit once wrapped in the request's JSON.
  const text = 'a lot of context '.repeat(Math.floor((MAX_BODY_BYTES - 1024) / 17));
  const peaks: string[] = [];
  for (const stream of [false, true, false]) {
    const { response, error } = await instance.invoke(request(text, stream));
    expect(error).toBeUndefined();
    const bytes = Buffer.concat(response!.chunks.map((chunk) => chunk.bytes));
    expect(bytes.toString('utf8')).toContain('"statusCode":200');
    peaks.push(peakMb().toFixed(1));
  }
  console.log(`peak after each request: ${peaks.join(', ')} MB`);
  expect(fakes.fakes['prov-a'].requests.length).toBeGreaterThanOrEqual(3);
  const peak = peakMb();
  console.log(
    `peak resident memory of the Lambda process with 6 MB requests at ${MEMORY_MB} MB: ${peak.toFixed(1)} MB`,
  );
  expect(peak).toBeLessThanOrEqual(MEMORY_MB * HEADROOM_SHARE);
});
