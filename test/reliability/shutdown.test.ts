/**
 * SIGTERM (or Ctrl-C) lets requests in flight finish, writes their rows, and
 * only then exits 0. The rows are read straight from the table after the
 * process is gone, so they were written before it exited.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../../lambda/local/dynamodb-local';
import { tableNames } from '../../lambda/store/tables';
import { rowPartitions } from '../../lambda/usage/dynamodb/row-shards';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { sdkDocumentClient } from './support/dynamo';
import { credentialHeaders, ENDPOINT, requestBody, streamEndedCleanly } from './support/requests';
import { spawnServer, type ServerProcess } from './support/server-process';
import { startStoreGate } from './support/store-gate';
import { EVENTUALLY_MS, eventually } from '../support/patience';

const FIXED_USAGE = { inputTokens: 777, outputTokens: 88, cacheReadTokens: 0, cacheWriteTokens: 0 };
const OWN_KEY = 'client-own-key-shutdown-0001';

let fakes: AllFakes;
let server: ServerProcess;

beforeAll(async () => {
  fakes = await startAllFakes();
  server = await spawnServer({ ...fakes.env });
});
afterAll(async () => {
  server?.cleanUp();
  await fakes?.close();
});

test('SIGTERM: the stream in flight and a request still waiting for its upstream both complete, rows are written, exit code 0', async () => {
  const created = await fetch(`${server.url}/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
    body: '{"name":"shutdown"}',
  });
  expect(created.status).toBe(201);
  const { account_id: accountId, token } = (await created.json()) as { account_id: string; token: string };

  fakes.fakes['prov-a'].next({ chunkIntervalMs: 150, chunks: 16, usage: FIXED_USAGE });
  const streaming = await fetch(server.url + '/api/proxy' + ENDPOINT['prov-a'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-a', token, OWN_KEY) },
    body: JSON.stringify(requestBody('prov-a', 'long answer', true)),
  });
  expect(streaming.status).toBe(200);
  const reader = streaming.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });

  // A second request whose upstream has not answered yet when the signal comes.
  fakes.fakes['prov-b'].next({ latencyMs: 1000, usage: FIXED_USAGE });
  const waiting = fetch(server.url + '/api/proxy' + ENDPOINT['prov-b'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token, OWN_KEY) },
    body: JSON.stringify(requestBody('prov-b', 'slow to start')),
  });
  await fakes.fakes['prov-b'].waitForRequests(1);

  server.child.kill('SIGTERM');

  for (let i = 0; i < 10_000; i++) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  expect(streamEndedCleanly('prov-a', text)).toBe(true);
  const second = await waiting;
  expect(second.status).toBe(200);
  expect(JSON.parse(await second.text())).toHaveProperty('choices');

  expect(await server.exited).toBe(0);
  expect(server.output()).toMatch(/SIGTERM: finishing \d+ request\(s\) in flight/);
  expect(server.output()).toMatch(/stopped\n$/);
  expect(server.output()).not.toContain(OWN_KEY);

  const Items = await tableRows(sdkDocumentClient(), server.tablePrefix, accountId);
  const byProvider = Object.fromEntries(Items.map((item) => [item.provider as string, item]));
  expect(Items).toHaveLength(2);
  expect(byProvider['prov-a']).toMatchObject({
    status_code: 200,
    stream: true,
    input_tokens: FIXED_USAGE.inputTokens,
    output_tokens: FIXED_USAGE.outputTokens,
  });
  expect(byProvider['prov-a']!.error).toBeUndefined();
  expect(byProvider['prov-b']).toMatchObject({
    status_code: 200,
    input_tokens: FIXED_USAGE.inputTokens,
    output_tokens: FIXED_USAGE.outputTokens,
  });
});

/** Every usage row of an account, read straight from a table with the SDK (not through the server). */
async function tableRows(
  doc: DynamoDBDocumentClient,
  tablePrefix: string,
  accountId: string,
): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  // Every partition the account's rows may be in (its shards, and the one rows had before shards).
  for (const partition of rowPartitions(accountId)) {
    const { Items = [] } = await doc.send(
      new QueryCommand({
        TableName: tableNames({}, tablePrefix).usageLogs,
        KeyConditionExpression: 'account_id = :account',
        ExpressionAttributeValues: { ':account': partition },
        ConsistentRead: true,
      }),
    );
    rows.push(...Items);
  }
  return rows;
}

async function newAccount(target: ServerProcess): Promise<{ accountId: string; token: string }> {
  const created = await fetch(`${target.url}/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.adminKey}`, 'content-type': 'application/json' },
    body: '{"name":"shutdown"}',
  });
  expect(created.status).toBe(201);
  const body = (await created.json()) as { account_id: string; token: string };
  return { accountId: body.account_id, token: body.token };
}

test('Ctrl-C in a terminal (SIGINT to the whole process group) during a stream: the row is in the table before the process exits, nothing is spooled', async () => {
  // Its own DynamoDB Local under DATA_DIR, as `npm start` runs; detached = a terminal's foreground job.
  const own = await spawnServer({ ...fakes.env, DYNAMODB_ENDPOINT: '' }, { detached: true });
  try {
    const { accountId, token } = await newAccount(own);
    fakes.fakes['prov-b'].next({ chunkIntervalMs: 150, chunks: 12, usage: FIXED_USAGE });
    const streaming = await fetch(own.url + '/api/proxy' + ENDPOINT['prov-b'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token, OWN_KEY) },
      body: JSON.stringify(requestBody('prov-b', 'ctrl-c during this', true)),
    });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value, { stream: true });

    process.kill(-own.child.pid!, 'SIGINT');

    for (let i = 0; i < 10_000; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(streamEndedCleanly('prov-b', text)).toBe(true);
    expect(await own.exited).toBe(0);
    expect(own.output()).not.toMatch(/spooled/);
    expect(existsSync(join(own.dataDir, 'row-spool.jsonl'))).toBe(false);

    // The server's store is gone with it: open its files with a new DynamoDB Local and read the row.
    const store = await startDynamoDbLocal(own.dataDir);
    try {
      const rows = await tableRows(documentClient(store.endpoint), own.tablePrefix, accountId);
      expect(rows).toEqual([
        expect.objectContaining({
          provider: 'prov-b',
          stream: true,
          status_code: 200,
          input_tokens: FIXED_USAGE.inputTokens,
          output_tokens: FIXED_USAGE.outputTokens,
        }),
      ]);
    } finally {
      await store.stop();
    }
  } finally {
    own.cleanUp();
  }
});

test('SIGKILL of the server leaves no DynamoDB Local behind', async () => {
  const own = await spawnServer({ ...fakes.env, DYNAMODB_ENDPOINT: '' });
  try {
    const javaOf = () =>
      spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter((line) => line.includes(join(own.dataDir, 'dynamodb')));
    expect(javaOf().length).toBeGreaterThan(0);
    own.child.kill('SIGKILL');
    await own.exited;
    await eventually(() => Promise.resolve(javaOf().length ? undefined : true));
    expect(javaOf()).toEqual([]);
  } finally {
    own.cleanUp();
  }
});

test('SIGTERM under a keep-alive client hammering: kept-alive connections close, every upstream call has a row, the process exits in time', async () => {
  const target = await spawnServer({ ...fakes.env, RATE_LIMIT_PER_MINUTE: '1000000' });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    const { accountId, token } = await newAccount(target);
    const upstream = fakes.fakes['prov-d'];
    upstream.reset();
    upstream.always({ latencyMs: 40, usage: FIXED_USAGE });
    const body = JSON.stringify(requestBody('prov-d', 'hammer'));
    let answered = 0;
    let signalledAt = 0;
    let answeredAfterSignal = 0;
    let refusedAfterSignal = false;
    const worker = async () => {
      while (!refusedAfterSignal) {
        const status = await post(
          agent,
          target.url + '/api/proxy' + ENDPOINT['prov-d'],
          { 'content-type': 'application/json', ...credentialHeaders('prov-d', token, OWN_KEY) },
          body,
        );
        if (status === undefined) {
          // Connection refused or closed: after the signal this is the server going away, as it should.
          if (signalledAt) refusedAfterSignal = Date.now() - signalledAt > 500 || refusedAfterSignal;
          await new Promise((r) => setTimeout(r, 10));
          continue;
        }
        answered++;
        if (signalledAt) answeredAfterSignal++;
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await eventually(() => Promise.resolve(answered >= 40 ? true : undefined), EVENTUALLY_MS, 20);

    signalledAt = Date.now();
    target.child.kill('SIGTERM');
    expect(await target.exited).toBe(0);
    const exitedAfterMs = Date.now() - signalledAt;
    refusedAfterSignal = true;
    await Promise.all(workers);

    // The documented bound is 10 s; the old server was still serving kept-alive sockets after 60 s.
    expect(exitedAfterMs).toBeLessThan(15_000);
    // Each kept-alive socket carries at most the request it had in flight and one already sent.
    expect(answeredAfterSignal).toBeLessThanOrEqual(16);
    expect(upstream.requests.length).toBeGreaterThanOrEqual(40);
    const rows = await tableRows(sdkDocumentClient(), target.tablePrefix, accountId);
    expect(rows.filter((row) => row.provider === 'prov-d')).toHaveLength(upstream.requests.length);
    expect(rows.every((row) => row.status_code === 200)).toBe(true);
    upstream.always(undefined);
  } finally {
    agent.destroy();
    target.cleanUp();
  }
});

function documentClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'eu-west-1',
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
}

/** One POST over the given agent; the status, or undefined when the connection failed. */
function post(agent: Agent, url: string, headers: Record<string, string>, body: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = httpRequest(url, { method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
      response.on('error', () => resolve(undefined));
    });
    request.on('error', () => resolve(undefined));
    request.end(body);
  });
}

test('SIGTERM with a request whose upstream never answers and the store down: the request is cut, its row is spooled, the process exits in time, the next start writes the row', async () => {
  const gate = await startStoreGate(process.env.DYNAMODB_ENDPOINT!);
  const first = await spawnServer({ ...fakes.env, DYNAMODB_ENDPOINT: gate.endpoint });
  let second: ServerProcess | undefined;
  try {
    const { accountId, token } = await newAccount(first);
    const upstream = fakes.fakes['prov-c'];
    upstream.next({ hang: true });
    const before = upstream.requests.length;
    const hanging = fetch(first.url + '/api/proxy' + ENDPOINT['prov-c'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-c', token, OWN_KEY) },
      body: JSON.stringify(requestBody('prov-c', 'never answered')),
    }).then(
      (response) => response.status,
      () => undefined,
    );
    await upstream.waitForRequests(before + 1);
    gate.set('down');

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await hanging;
    // In time: the drain's deadline, not the hanging upstream, ended the request.
    expect(first.output()).toMatch(/1 request\(s\) still running after 6 s: ending them/);
    const spooled = readFileSync(join(first.dataDir, 'row-spool.jsonl'), 'utf8').split('\n').filter(Boolean);
    expect(spooled.map((line) => JSON.parse(line) as { provider: string })).toEqual([
      expect.objectContaining({ provider: 'prov-c', account_id: accountId }),
    ]);

    gate.set('up');
    second = await spawnServer({ ...fakes.env }, { dataDir: first.dataDir, tablePrefix: first.tablePrefix });
    const rows = await eventually(async () => {
      const found = await tableRows(sdkDocumentClient(), first.tablePrefix, accountId);
      return found.length ? found : undefined;
    });
    expect(rows).toEqual([expect.objectContaining({ provider: 'prov-c' })]);
  } finally {
    gate.set('up');
    second?.cleanUp();
    first.cleanUp();
    await gate.close();
  }
});

test('SIGTERM with requests still running at the deadline: their rows say the server cut them (503 while waiting, the provider status mid-stream), not that a client left', async () => {
  const target = await spawnServer({ ...fakes.env });
  try {
    const { accountId, token } = await newAccount(target);
    // Waiting: the provider never answers.
    fakes.fakes['prov-c'].next({ hang: true });
    const beforeWaiting = fakes.fakes['prov-c'].requests.length;
    const waiting = fetch(target.url + '/api/proxy' + ENDPOINT['prov-c'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-c', token, OWN_KEY) },
      body: JSON.stringify(requestBody('prov-c', 'never answered')),
    }).then(
      (response) => response.text(),
      () => undefined,
    );
    await fakes.fakes['prov-c'].waitForRequests(beforeWaiting + 1);
    // Streaming: far longer than the grace period.
    fakes.fakes['prov-d'].next({ chunkIntervalMs: 500, chunks: 200, usage: FIXED_USAGE });
    const streaming = await fetch(target.url + '/api/proxy' + ENDPOINT['prov-d'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-d', token, OWN_KEY) },
      body: JSON.stringify(requestBody('prov-d', 'endless story', true)),
    });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    await reader.read();

    target.child.kill('SIGTERM');
    const drained = (async () => {
      for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
    })();
    expect(await target.exited).toBe(0);
    await Promise.all([waiting, drained]);
    expect(target.output()).toMatch(/2 request\(s\) still running after 6 s: ending them/);

    const rows = await tableRows(sdkDocumentClient(), target.tablePrefix, accountId);
    const byProvider = Object.fromEntries(rows.map((row) => [row.provider as string, row]));
    expect(byProvider['prov-c']).toMatchObject({
      status_code: 503,
      error: 'the server shut down before the provider answered and cut the request',
    });
    expect(byProvider['prov-d']).toMatchObject({
      status_code: 200,
      stream: true,
      error: 'the server shut down mid-response and cut the request',
    });
    for (const row of rows) expect(String(row.error)).not.toMatch(/client disconnected/);
  } finally {
    target.cleanUp();
  }
});
