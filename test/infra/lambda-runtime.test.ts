import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { rowPartition } from '../../lambda/usage/dynamodb/row-shards';
import { ROW_WRITE_RESERVE_MS } from '../../lambda/pipeline/forward-upstream';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { createTestTables } from '../support/tables';
import { startStoreLink, type StoreLink } from './support/store-link';
import { accountWithStoredKey, functionUrlEvent } from './support/lambda-account';
import {
  RIC_INSTALL_MS,
  runtimeInterfaceClientInstalled,
  startLambdaInstance,
  type LambdaInstance,
} from './support/lambda-instance';
import type { Invocation, InvokeOptions } from './support/runtime-api';

/**
 * The built Lambda bundle (dist/lambda/handler.mjs, what `cdk deploy` ships) run by AWS's runtime
 * interface client, the runtime of Lambda's Node.js images, against a Runtime API on 127.0.0.1:
 * one instance for the whole file, so its cold start is followed by warm invocations as in Lambda.
 */
const TASK_ROOT = resolve(__dirname, '../../dist/lambda');

let fakes: AllFakes;
let dataDir: string;
let token: string;
let accountId: string;
let tables: Awaited<ReturnType<typeof createTestTables>>;
let store: StoreLink;
let instance: LambdaInstance;

// scripts/test-all.sh may still be compiling the runtime interface client.
beforeAll(runtimeInterfaceClientInstalled, RIC_INSTALL_MS);

beforeAll(async () => {
  fakes = await startAllFakes();
  tables = await createTestTables();
  store = await startStoreLink(process.env.DYNAMODB_ENDPOINT!);
  // Usage rows reach the store late: an invocation that ended before its row was written would be
  // caught frozen with the row still unsent.
  store.holdWritesTo(tables.tables.usageLogs, 300);
  dataDir = mkdtempSync(join(tmpdir(), 'lambda-ric-'));
  // Stored mode: a key sealed with the same local key the handler will find under DATA_DIR.
  ({ token, accountId } = await accountWithStoredKey(tables, dataDir, 'lambda', 'anthropic-stored-key-123456'));
  instance = await startLambdaInstance({
    taskRoot: TASK_ROOT,
    handler: 'handler.handler',
    env: {
      ...process.env,
      ...fakes.env,
      DYNAMODB_ENDPOINT: store.endpoint,
      TABLE_PREFIX: tables.prefix,
      DATA_DIR: dataDir,
      ADMIN_KEY: 'admin-key-for-the-lambda-runtime-test',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    onFreeze: () => store.freeze(),
    onThaw: () => store.thaw(),
  });
});

afterAll(async () => {
  await instance?.stop();
  await store?.close();
  await fakes.close();
  rmSync(dataDir, { recursive: true, force: true });
  tables.clients.raw.destroy();
});

interface Answer {
  invocation: Invocation;
  prelude: { statusCode: number; headers: Record<string, string> };
  body: string;
  /** When each part of the body reached the Runtime API (ms after the event was handed out). */
  bodyArrivals: number[];
}

/** One invocation, to its end (the runtime asking for the next event); the instance is frozen when this resolves. */
async function invoke(event: object, options?: InvokeOptions): Promise<Answer> {
  const invocation = await instance.invoke(event, options);
  const chunks = invocation.response?.chunks ?? [];
  const bytes = Buffer.concat(chunks.map((chunk) => chunk.bytes));
  const separator = bytes.indexOf(Buffer.alloc(8));
  if (separator < 0) throw new Error(`no prelude in the streamed answer; the instance printed:\n${instance.output()}`);
  const bodyStart = separator + 8;
  const bodyArrivals: number[] = [];
  let end = 0;
  for (const chunk of chunks) {
    end += chunk.bytes.length;
    if (end > bodyStart) bodyArrivals.push(chunk.at);
  }
  return {
    invocation,
    prelude: JSON.parse(bytes.subarray(0, separator).toString('utf8')),
    body: bytes.subarray(bodyStart).toString('utf8'),
    bodyArrivals,
  };
}

async function rowOf(requestId: string): Promise<Record<string, unknown> | undefined> {
  const { Items } = await tables.clients.doc.send({
    operation: 'Query',
    input: {
      TableName: tables.tables.usageLogs,
      KeyConditionExpression: 'account_id = :a',
      ExpressionAttributeValues: { ':a': rowPartition(accountId, requestId) },
    },
  });
  return Items!.find((item) => item.id === requestId);
}

const streamRequest = (requester: string) =>
  functionUrlEvent(
    '/api/proxy/v1/messages',
    { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'x-proxy-user': requester },
    {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'stream please' }],
    },
  );

describe("the built Lambda bundle under AWS's runtime interface client", () => {
  it("streams in Lambda's protocol: the prelude, then an SSE answer event by event; the invocation ends after the row is written", async () => {
    fakes.fakes['prov-a'].next({ chunks: 6, chunkIntervalMs: 60 });
    const { invocation, prelude, body, bodyArrivals } = await invoke(streamRequest('lambda-test'));

    // Response streaming as the runtime speaks it to Lambda.
    const response = invocation.response!;
    expect(response.headers['lambda-runtime-function-response-mode']).toBe('streaming');
    expect(response.headers['content-type']).toBe('application/vnd.awslambda.http-integration-response');
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.complete).toBe(true);
    expect(response.trailers['lambda-runtime-function-error-type']).toBeUndefined();
    expect(invocation.error).toBeUndefined();
    expect(prelude.statusCode).toBe(200);
    expect(prelude.headers['content-type']).toContain('text/event-stream');
    expect(prelude.headers['x-proxy-request-id']).toBeTruthy();
    expect(body).toContain('event: message_start');
    expect(body).toContain('event: message_stop');

    // Streamed, not buffered: the body reaches Lambda in parts spread over the upstream's pacing.
    expect(bodyArrivals.length).toBeGreaterThanOrEqual(6);
    expect(bodyArrivals[bodyArrivals.length - 1] - bodyArrivals[0]).toBeGreaterThanOrEqual(250);

    // The upstream got the stored key in its own header, and nothing of the proxy's.
    const upstream = fakes.fakes['prov-a'].requests.at(-1)!;
    expect(upstream.headers['x-api-key']).toBe('anthropic-stored-key-123456');
    expect(upstream.headers['x-forwarded-for']).toBeUndefined();

    // The invocation ended only after its usage row was durably written: the instance is frozen
    // since the runtime asked for the next event, and the row is already there.
    const row = await rowOf(prelude.headers['x-proxy-request-id']);
    expect(row).toMatchObject({
      provider: 'prov-a',
      stream: true,
      requester: 'lambda-test',
      status_code: 200,
      mode: 'stored',
    });
    expect(row!.output_tokens).toBe(upstream.response.usage!.outputTokens);
  });

  it('answers errors in the endpoint shape through the same prelude protocol', async () => {
    const { invocation, prelude, body } = await invoke(
      functionUrlEvent(
        '/api/proxy/prov-b/v1/chat/completions',
        { authorization: 'Bearer sk-proxy-wrong' },
        { model: 'x', messages: [] },
      ),
    );
    expect(invocation.response!.headers['lambda-runtime-function-response-mode']).toBe('streaming');
    expect(invocation.error).toBeUndefined();
    expect(prelude.statusCode).toBe(401);
    expect(JSON.parse(body).error.type).toBe('authentication_error');
  });

  it('serves invocation after invocation from its one cold start, reusing the clients built then', async () => {
    fakes.fakes['prov-a'].next({ chunks: 2 });
    const first = await invoke(streamRequest('warm-1'));
    const openedBefore = store.opened();
    const mark = store.now();
    fakes.fakes['prov-a'].next({ chunks: 2 });
    const second = await invoke(streamRequest('warm-2'));

    expect([first.prelude.statusCode, second.prelude.statusCode]).toEqual([200, 200]);
    expect(await rowOf(second.prelude.headers['x-proxy-request-id'])).toMatchObject({
      requester: 'warm-2',
      status_code: 200,
    });
    // One process, one module load: no init error, every event asked for by the same runtime.
    expect(instance.process.exitCode).toBeNull();
    expect(instance.api.initErrors).toEqual([]);
    // The second invocation's store calls went over the kept-alive connections opened before it.
    const used = store.usedSince(mark);
    expect(used.length).toBeGreaterThan(0);
    expect(store.opened()).toBe(openedBefore);
    expect(used.every((id) => id < openedBefore)).toBe(true);
  });

  it('records the whole answer of an invocation whose client went away mid-stream (Lambda does not tell the function)', async () => {
    fakes.fakes['prov-a'].next({ chunks: 6, chunkIntervalMs: 60 });
    const { invocation, prelude, bodyArrivals } = await invoke(streamRequest('leaves-early'), {
      clientLeavesAfterBodyBytes: 1,
    });
    const response = invocation.response!;
    expect(response.clientLeftAt).toBeDefined();
    // The stream went on after the client left, to its end, and the invocation ended normally.
    expect(bodyArrivals.filter((at) => at > response.clientLeftAt!).length).toBeGreaterThan(0);
    expect(response.complete).toBe(true);
    expect(invocation.error).toBeUndefined();
    // Its row holds the whole answer's usage, written before the invocation ended (the instance is frozen).
    const upstream = fakes.fakes['prov-a'].requests.at(-1)!;
    const row = await rowOf(prelude.headers['x-proxy-request-id']);
    expect(row).toMatchObject({ provider: 'prov-a', requester: 'leaves-early', status_code: 200 });
    expect(row!.output_tokens).toBe(upstream.response.usage!.outputTokens);
    expect(row!.error).toBeUndefined();
  });

  it("ends an answer still streaming near Lambda's time limit with its error event, and writes its row before the limit", async () => {
    // An answer of about 12 s; the invocation may run 5 s past the reserve the proxy keeps for the row
    // (room for the steps before forwarding on a loaded machine: the cut must come mid-stream).
    fakes.fakes['prov-a'].next({ chunks: 40, chunkIntervalMs: 300 });
    const { invocation, prelude, body } = await invoke(streamRequest('time-limit'), {
      timeoutMs: ROW_WRITE_RESERVE_MS + 5_000,
    });
    const reason = "before the function's time limit, to record its usage";

    // The stream closed with the dialect's own error event, and the invocation ended normally, before
    // the limit (at the limit the instance would have been stopped, and this invocation failed).
    expect(prelude.statusCode).toBe(200);
    expect(body).toContain('event: message_start');
    expect(body).not.toContain('event: message_stop');
    const last = body.trim().split('\n\n').at(-1)!;
    expect(last.split('\n')[0]).toBe('event: error');
    expect(JSON.parse(last.split('\n')[1].slice('data: '.length))).toMatchObject({
      type: 'error',
      error: { type: 'api_error', message: expect.stringContaining(reason) },
    });
    expect(invocation.response!.complete).toBe(true);
    expect(invocation.error).toBeUndefined();
    expect(invocation.endedAtEpoch).toBeLessThan(invocation.deadline);

    // Its row was written before the invocation ended: status, the reason, the usage reported before the cut.
    const upstream = fakes.fakes['prov-a'].requests.at(-1)!;
    const row = await rowOf(prelude.headers['x-proxy-request-id']);
    expect(row).toMatchObject({ provider: 'prov-a', requester: 'time-limit', stream: true, status_code: 200 });
    expect(row!.error).toContain(reason);
    expect(row!.input_tokens).toBe(upstream.response.usage!.inputTokens);
  });
});
