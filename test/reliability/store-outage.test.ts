/**
 * Store faults (connections refused, every call throttled, a connection or an
 * answer lost): requests fail closed with 503 before anything is forwarded,
 * rows of requests already forwarded are kept (retried, then spooled to
 * DATA_DIR and written back) and counted once, and service resumes when the
 * store does, without a restart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import {
  callProxy,
  credentialHeaders,
  ENDPOINT,
  expectChatError,
  expectMessagesError,
  requestBody,
  streamEndedCleanly,
  upstreamCalls,
  expectManagementError,
} from './support/requests';
import { allRows, rowOf, statsTotals } from './support/rows';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';
import { EVENTUALLY_MS, eventually } from '../support/patience';

jest.setTimeout(300_000);

const FIXED_USAGE = { inputTokens: 321, outputTokens: 54, cacheReadTokens: 0, cacheWriteTokens: 0 };
const OWN_KEY = 'client-own-key-outage-0001';

let gate: StoreGate;
let proxy: ProxyServer;
let token: string;

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  gate = await startStoreGate(endpoint);
  proxy = await startProxy({ env: { DYNAMODB_ENDPOINT: gate.endpoint } });
  proxy.secrets.add(OWN_KEY);
  token = proxy.account.token;
});
afterAll(async () => {
  gate?.set('up');
  await proxy?.stop();
  await gate?.close();
});
afterEach(() => gate.set('up'));

/** Whether the server prints a line matching `pattern` within `timeoutMs`. */
async function waitForOutput(pattern: RegExp, timeoutMs: number): Promise<boolean> {
  return (await eventually(async () => (pattern.test(proxy.output()) ? true : undefined), timeoutMs)) ?? false;
}

async function expectFailClosed(): Promise<void> {
  const before = upstreamCalls(proxy);
  const messages = await callProxy(proxy, { provider: 'prov-a', token, stream: true });
  expect(messages.status).toBe(503);
  expect(expectMessagesError(messages.text).message).toMatch(/unavailable/);
  expect(messages.headers.get('retry-after')).toBeTruthy();

  const cached = await callProxy(proxy, { provider: 'prov-b', token, cache: 'true', prompt: 'during the outage' });
  expect(cached.status).toBe(503);
  expect(expectChatError(cached.text)).toMatchObject({ type: 'server_error', code: 'service_unavailable' });

  const passThrough = await callProxy(proxy, { provider: 'prov-c', token, providerKey: OWN_KEY });
  expect(passThrough.status).toBe(503);
  expectChatError(passThrough.text);

  // Nothing went upstream unauthenticated or unmetered.
  expect(upstreamCalls(proxy)).toBe(before);
  // The process is alive and says so; the management API fails closed too.
  expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  const logs = await proxy.api('/api/logs', { token });
  expect(logs.status).toBe(503);
  expect(expectManagementError(await logs.text()).code).toBe('store_unavailable');
}

const anyCall = () => true;

/** The log lines of the refusals during each outage, checked at the end (what the operator sees). */
const printedDuring: { down?: string; throttle?: string } = {};
const refusalLine = (from: number) =>
  proxy
    .output()
    .slice(from)
    .split('\n')
    .find((line) => line.includes('"message":"request failed"') && line.includes('"status":503'));

test('a single dropped store connection is retried: the request succeeds', async () => {
  gate.disturb('reset', anyCall);
  const result = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'one blip' });
  expect(gate.disturbed).toBe(1);
  expect(result.status).toBe(200);
});

test("a store that refuses the token gate's call as malformed (a bug on our side) gives a 500, not a 503 that invites retries; nothing forwarded", async () => {
  const before = upstreamCalls(proxy);
  gate.disturb(
    'reject',
    (call) => call.operation === 'UpdateItem' && call.tables.some((table) => table.endsWith('rate-limits')),
  );
  const printed = proxy.output().length;
  const failed = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'a refused gate call' });
  expect(failed.status).toBe(500);
  expect(failed.headers.get('retry-after')).toBeNull();
  expect(expectChatError(failed.text)).toMatchObject({
    type: 'server_error',
    message: 'Internal error in the proxy. The request id is in the x-proxy-request-id header.',
  });
  expect(failed.text).not.toContain('parameter values were invalid');
  expect(upstreamCalls(proxy)).toBe(before);
  expect(proxy.output().slice(printed)).toMatch(/"message":"request failed".*"status":500.*ValidationException/);
  expect((await callProxy(proxy, { provider: 'prov-b', token, prompt: 'the next one' })).status).toBe(200);
});

test('a cache read the store fails is a miss: the provider answers, the row is written, the log says why', async () => {
  const before = upstreamCalls(proxy);
  gate.disturb(
    'fail',
    (call) => call.operation === 'Query' && call.tables.some((table) => table.endsWith('cache')),
    50,
  );
  const printed = proxy.output().length;
  const answered = await callProxy(proxy, { provider: 'prov-b', token, cache: 'true', prompt: 'an unreadable cache' });
  gate.calm();
  expect(answered.status).toBe(200);
  expect(answered.headers.get('x-proxy-cache')).toBe('MISS');
  expect(upstreamCalls(proxy)).toBe(before + 1);
  expect((await rowOf(proxy, token, answered.requestId)).status_code).toBe(200);
  expect(proxy.output().slice(printed)).toMatch(
    /"message":"cache not read; the request goes to the provider".*"error":"InternalServerError"/,
  );
});

test('store unreachable: 503 in the endpoint shape, nothing forwarded, service resumes without a restart', async () => {
  expect((await callProxy(proxy, { provider: 'prov-b', token })).status).toBe(200);
  const printed = proxy.output().length;
  gate.set('down');
  await expectFailClosed();
  printedDuring.down = refusalLine(printed);

  gate.set('up');
  const recovered = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'after the outage' });
  expect(recovered.status).toBe(200);
  expect((await rowOf(proxy, token, recovered.requestId)).status_code).toBe(200);
});

test('store throttling every call: the same 503, nothing forwarded, then recovery', async () => {
  const printed = proxy.output().length;
  gate.set('throttle');
  await expectFailClosed();
  expect(gate.throttled).toBeGreaterThan(0);
  printedDuring.throttle = refusalLine(printed);
  gate.set('up');
  expect((await callProxy(proxy, { provider: 'prov-d', token, prompt: 'after throttling' })).status).toBe(200);
});

test('after an outage, a single dropped store connection is still retried (no 503 once the store is back)', async () => {
  gate.set('down');
  for (let i = 0; i < 10; i++)
    expect((await callProxy(proxy, { provider: 'prov-b', token, prompt: `outage ${i}` })).status).toBe(503);
  gate.set('up');
  expect((await callProxy(proxy, { provider: 'prov-b', token, prompt: 'store is back' })).status).toBe(200);
  const disturbedBefore = gate.disturbed;
  gate.disturb('reset', anyCall);
  const result = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'one blip after the outage' });
  expect(gate.disturbed).toBe(disturbedBefore + 1);
  expect(result.status).toBe(200);
});

/** The request ids of the rows in the server's spool (DATA_DIR/row-spool.jsonl, and the file a replay has claimed). */
function spooledIds(): string[] {
  // A replay renames and removes these files as it runs: a file that is not there holds nothing.
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').split('\n').filter(Boolean);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  };
  return ['row-spool.jsonl', 'row-spool.jsonl.replaying']
    .flatMap((name) => read(join(proxy.dataDir, name)))
    .map((line) => (JSON.parse(line) as { id: string }).id);
}

/** Starts a slow stream, cuts the store once it is flowing, and returns its id and full text. */
async function streamThroughOutage(prompt: string): Promise<{ requestId: string; text: string }> {
  proxy.fakes.fakes['prov-b'].next({ chunkIntervalMs: 150, chunks: 12, usage: FIXED_USAGE });
  const response = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
    body: JSON.stringify(requestBody('prov-b', prompt, true)),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const first = await reader.read();
  text += decoder.decode(first.value, { stream: true });
  gate.set('down');
  for (let i = 0; i < 10_000; i++) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { requestId: response.headers.get('x-proxy-request-id')!, text };
}

test('a row whose write fails is retried with backoff and lands once the store is back', async () => {
  const { requestId, text } = await streamThroughOutage('row retried');
  // The stream itself never depended on the store.
  expect(streamEndedCleanly('prov-b', text)).toBe(true);
  // Back up, but the next two writes of this row are cut before the store sees them: the row lands on a later attempt.
  const disturbedBefore = gate.disturbed;
  gate.disturb('reset', writesTo('usage-logs', requestId), 2);
  gate.set('up');
  const row = await rowOf(proxy, token, requestId);
  expect(row).toMatchObject({
    status_code: 200,
    input_tokens: FIXED_USAGE.inputTokens,
    output_tokens: FIXED_USAGE.outputTokens,
  });
  expect(gate.disturbed - disturbedBefore).toBe(2);
  expect(proxy.output()).not.toMatch(new RegExp(`spooled to disk[^\\n]*"request_id":"${requestId}"`));
});

test('a row still refused after every retry is spooled to DATA_DIR and written back when the store answers', async () => {
  const { requestId, text } = await streamThroughOutage('row spooled');
  expect(streamEndedCleanly('prov-b', text)).toBe(true);
  // What the operator sees: a warning naming the request.
  expect(
    await waitForOutput(new RegExp(`usage row spooled to disk[^\\n]*"request_id":"${requestId}"`), 2 * EVENTUALLY_MS),
  ).toBe(true);
  expect(spooledIds()).toContain(requestId);
  // Earlier tests' replays may have logged the same line: only a new one counts.
  const replaysLogged = () => proxy.timesPrinted('"message":"spooled usage rows written"');
  const loggedBefore = replaysLogged();

  gate.set('up');
  const row = await rowOf(proxy, token, requestId);
  expect(row).toMatchObject({
    status_code: 200,
    input_tokens: FIXED_USAGE.inputTokens,
    output_tokens: FIXED_USAGE.outputTokens,
  });
  // The replay may still be writing other kept rows after this one: its spool file goes when it ends.
  // Written once, not once per replay: the spool no longer holds it, so no later replay can write it again.
  const replayEnded = await eventually(
    async () => (!spooledIds().includes(requestId) && replaysLogged() > loggedBefore ? true : undefined),
    EVENTUALLY_MS,
  );
  expect(replayEnded).toBe(true);
  expect(spooledIds()).not.toContain(requestId);
  expect((await allRows(proxy, token)).filter((r) => r.id === requestId)).toHaveLength(1);
});

/** One pass-through request for a fresh account, so its overview counts only this request; `before` runs first. */
async function oneRequestForNewAccount(
  before: (accountId: string) => void,
): Promise<{ account: { token: string; accountId: string }; requestId: string }> {
  const account = await proxy.createAccount('rollup');
  before(account.accountId);
  proxy.fakes.fakes['prov-e'].next({ usage: FIXED_USAGE });
  const result = await callProxy(proxy, { provider: 'prov-e', token: account.token, providerKey: OWN_KEY });
  expect(result.status).toBe(200);
  return { account, requestId: result.requestId };
}

/**
 * The request's row and the overview count it once. `retries` are the writes that must be sent again
 * after the disturbed one: once the store has answered one of each, nothing of this request is left in
 * flight. A second request then marks the stream: the overview folds the stream in order, so when
 * it counts the second request it has folded everything the first one wrote, retries included.
 */
async function expectCountedOnce(
  account: { token: string; accountId: string },
  requestId: string,
  retries: Array<(call: StoreCall) => boolean>,
): Promise<void> {
  await rowOf(proxy, account.token, requestId);
  expect(await allRows(proxy, account.token)).toHaveLength(1);
  for (const retry of retries)
    expect(await eventually(async () => (gate.answered(retry) > 0 ? true : undefined))).toBe(true);
  proxy.fakes.fakes['prov-e'].next({ usage: FIXED_USAGE });
  expect((await callProxy(proxy, { provider: 'prov-e', token: account.token, providerKey: OWN_KEY })).status).toBe(200);
  await eventually(async () => ((await statsTotals(proxy, account.token)).requests >= 2 ? true : undefined));
  const totals = await statsTotals(proxy, account.token);
  expect({ requests: totals.requests, input: totals.input_tokens, output: totals.output_tokens }).toEqual({
    requests: 2,
    input: 2 * FIXED_USAGE.inputTokens,
    output: 2 * FIXED_USAGE.outputTokens,
  });
}

/** Any call that writes items carrying this id (an account's, a request's) to the table (single, batch or transaction). */
const writesTo = (table: string, id: string) => (call: StoreCall) =>
  /^(PutItem|UpdateItem|BatchWriteItem|TransactWriteItems)$/.test(call.operation) &&
  call.tables.some((name) => name.endsWith(table)) &&
  JSON.stringify(call.body).includes(id);

test('a row write whose answer is lost (the store did write it) is still rolled up into the overview once', async () => {
  const disturbedBefore = gate.disturbed;
  const { account, requestId } = await oneRequestForNewAccount((accountId) =>
    gate.disturb('lose-answer', writesTo('usage-logs', accountId)),
  );
  await expectCountedOnce(account, requestId, [writesTo('usage-logs', account.accountId)]);
  expect(gate.disturbed - disturbedBefore).toBe(1);
});

test('a rollup update whose answer is lost (the store did apply it) is not counted twice', async () => {
  const disturbedBefore = gate.disturbed;
  // The first write of the hour bucket and of the day bucket, so whichever the period reads was disturbed.
  const bucketWrite = (accountId: string, bucket: string) => (call: StoreCall) =>
    writesTo('usage-stats', accountId)(call) && JSON.stringify(call.body).includes(bucket);
  const { account, requestId } = await oneRequestForNewAccount((accountId) => {
    for (const bucket of ['"H#', '"D#']) gate.disturb('lose-answer', bucketWrite(accountId, bucket));
  });
  await expectCountedOnce(account, requestId, [
    bucketWrite(account.accountId, '"H#'),
    bucketWrite(account.accountId, '"D#'),
  ]);
  expect(gate.disturbed - disturbedBefore).toBe(2);
});

test('what the operator sees: each refusal is a log line naming the error and why the store failed', () => {
  expect(printedDuring.down).toMatch(/"error":"StoreUnavailableError"/);
  expect(printedDuring.down).toMatch(/ECONNRESET|ECONNREFUSED|socket hang up/);
  expect(printedDuring.throttle).toMatch(/ProvisionedThroughputExceeded|Throttl/);
  // A spooled row is announced with its request id (checked above) and its write-back is logged.
  expect(proxy.output()).toMatch(/"message":"spooled usage rows written"/);
});
