/**
 * At a partition's ceiling (docs/deploy.md, "Partition ceilings"): DynamoDB answers throttling
 * errors for one partition only. A request whose reads before forwarding land there is retried by
 * the store client, then refused with 503 and Retry-After, never forwarded; a request of the same
 * account whose partitions are not throttled is served. A row whose shard keeps refusing its write
 * is retried with backoff and stored exactly once; one whose partitions stay throttled past every
 * retry is spooled after at most `retryPolicies.rowWrite().attempts` sends (the store client does
 * not retry row writes on top), as in a store outage, and written exactly once when they recover.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { retryPolicies } from '../../lambda/base/retry';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { EVENTUALLY_MS, eventually } from '../support/patience';
import { expectedCostUsd } from '../support/sdk-clients';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls } from './support/requests';
import { allRows, rowOf } from './support/rows';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';

let gate: StoreGate;
let proxy: ProxyServer;

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  gate = await startStoreGate(endpoint);
  proxy = await startProxy({ env: { DYNAMODB_ENDPOINT: gate.endpoint } });
  for (const requester of ['hot', 'cool']) {
    const response = await proxy.api(`/api/budgets/requesters/${requester}`, {
      method: 'PUT',
      token: proxy.account.token,
      body: { limit_usd: 100, period: 'day' },
    });
    expect(response.status).toBe(200);
  }
});

afterAll(async () => {
  await proxy?.stop();
  await gate?.close();
});

test("throttling on one requester's partition: its requests get 503 with Retry-After after retries and are not forwarded; the account's other requesters are served", async () => {
  const hotPartition = `ACCOUNT#${proxy.account.accountId}#R#${createHash('sha256').update('hot').digest('base64url')}`;
  const readsHot = (call: StoreCall) =>
    ['GetItem', 'BatchGetItem'].includes(call.operation) && JSON.stringify(call.body).includes(hotPartition);
  gate.disturb('throttle', readsHot, 1_000);
  const upstream = proxy.fakes.fakes['prov-b'];
  const before = upstream.requests.length;

  const hot = await callProxy(proxy, {
    provider: 'prov-b',
    token: proxy.account.token,
    headers: { 'x-proxy-user': 'hot' },
  });
  expect(hot.status).toBe(503);
  expect(hot.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(JSON.parse(hot.text)).toMatchObject({ error: { code: 'service_unavailable' } });
  // Retried before giving up: more than one throttled answer for the one request.
  expect(gate.disturbed).toBeGreaterThan(1);
  expect(upstream.requests.length).toBe(before);

  const cool = await callProxy(proxy, {
    provider: 'prov-b',
    token: proxy.account.token,
    headers: { 'x-proxy-user': 'cool' },
  });
  expect(cool.status).toBe(200);
  expect(upstream.requests.length).toBe(before + 1);
  gate.calm();
  // Its row is written after the answer: stored before the next test counts the requester's rows.
  await rowOf(proxy, proxy.account.token, cool.requestId);
});

test("throttling on the account's row shards, many answers in a row: the answer is served, the row is stored once, its spend counted once", async () => {
  const rowWrites = (call: StoreCall) =>
    call.operation === 'PutItem' &&
    call.tables.some((table) => table.endsWith('usage-logs')) &&
    JSON.stringify(call.body).includes(`"${proxy.account.accountId}#`);
  const disturbedBefore = gate.disturbed;
  // Throttled answers in a row for the row's put, one fewer than the row writer's attempts.
  gate.disturb('throttle', rowWrites, ROW_ATTEMPTS - 1);
  const answer = await callProxy(proxy, {
    provider: 'prov-b',
    token: proxy.account.token,
    headers: { 'x-proxy-user': 'cool' },
  });
  expect(answer.status).toBe(200);
  const row = await rowOf(proxy, proxy.account.token, answer.requestId);
  expect(gate.disturbed - disturbedBefore).toBe(ROW_ATTEMPTS - 1);
  expect(row).toMatchObject({ id: answer.requestId, status_code: 200 });
  const logs = (await (await proxy.api('/api/logs?limit=100', { token: proxy.account.token })).json()) as {
    items: Array<{ id: string }>;
  };
  expect(logs.items.filter((item) => item.id === answer.requestId)).toHaveLength(1);
  const nanos = (values: number[]) => values.reduce((sum, value) => sum + Math.round(value * 1e9), 0);
  const spentAndLogged = async () => {
    const { requesters } = (await (await proxy.api('/api/budgets', { token: proxy.account.token })).json()) as {
      requesters: Array<{ requester: string; spent_usd: number }>;
    };
    const rows = (await (
      await proxy.api('/api/logs?limit=100&requester=cool', { token: proxy.account.token })
    ).json()) as { items: Array<{ id: string; cost_usd: number }> };
    return {
      spent: nanos([requesters.find((r) => r.requester === 'cool')!.spent_usd]),
      logged: nanos(rows.items.map((r) => r.cost_usd)),
      listed: rows.items.some((r) => r.id === answer.requestId),
    };
  };
  // The spend is folded by the server's stream consumer after the row is stored; the requester's
  // listing must show the row too, or both sides could still be without it.
  await eventually(async () => {
    const { spent, logged, listed } = await spentAndLogged();
    return listed && spent === logged ? true : undefined;
  });
  const { spent, logged } = await spentAndLogged();
  expect(spent).toBe(logged);
});

/** Every call the store client makes for one store call before giving up (the one retry helper's policy). */
const STORE_CALL_ATTEMPTS = retryPolicies.storeCall(() => true).attempts;
/** Every send of a row's write before the row is spooled: the row writer's attempts, each sent once. */
const ROW_ATTEMPTS = retryPolicies.rowWrite().attempts;

const FIXED_USAGE = { inputTokens: 1234, outputTokens: 567, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** Whether the server prints a line matching `pattern` from `from` on, within `timeoutMs`. */
async function printed(pattern: RegExp, from: number, timeoutMs = EVENTUALLY_MS): Promise<boolean> {
  return (
    (await eventually(async () => (pattern.test(proxy.output().slice(from)) ? true : undefined), timeoutMs)) ?? false
  );
}

/** The rows in the server's spool (its file, and the one a replay has claimed). */
function spooledRows(): Array<{ id: string; account_id: string }> {
  const files = ['row-spool.jsonl', 'row-spool.jsonl.replaying']
    .map((name) => join(proxy.dataDir, name))
    .filter((file) => existsSync(file));
  return files
    .flatMap((file) => readFileSync(file, 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as { id: string; account_id: string });
}

/** The request ids of the rows in the server's spool. */
const spooledIds = () => spooledRows().map((row) => row.id);

/** The account's token spend this month and a requester's today, in nanodollars, as the budgets API reports them. */
async function spentNanos(account: Account, requester: string): Promise<{ token: number; requester: number }> {
  const tokens = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
    tokens: Array<{ token_id: string; budget: { spent_usd: number } }>;
  };
  const { requesters } = (await (await proxy.api('/api/budgets', { token: account.token })).json()) as {
    requesters: Array<{ requester: string; spent_usd: number }>;
  };
  const nanos = (usd: number | undefined) => Math.round((usd ?? Number.NaN) * 1e9);
  return {
    token: nanos(tokens.tokens.find((t) => t.token_id === account.tokenId)?.budget.spent_usd),
    requester: nanos(requesters.find((r) => r.requester === requester)?.spent_usd),
  };
}

test("throttling on a row's partitions that outlasts every retry: the answer is served, the row is spooled, then written once with its exact tokens and cost, its spend counted once, when the partitions recover", async () => {
  const account = await proxy.createAccount('outlasted');
  await proxy.saveKey(account.token, 'prov-b');
  expect(
    (
      await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 100, period: 'month' },
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await proxy.api('/api/budgets/requesters/batch-job', {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 100, period: 'day' },
      })
    ).status,
  ).toBe(200);
  // The row's puts, each counted as it arrives, until one of the account's rows is spooled.
  let sendsBeforeSpooled = 0;
  const rowPut = (call: StoreCall) => {
    const matches =
      call.operation === 'PutItem' &&
      call.tables.some((table) => table.endsWith('usage-logs')) &&
      JSON.stringify(call.body).includes(`"${account.accountId}#`);
    if (matches && !spooledRows().some((row) => row.account_id === account.accountId)) sendsBeforeSpooled++;
    return matches;
  };
  // The row shard refuses the put as over its throughput at first, then throttles it, until the test
  // calms it: longer than the row writer retries.
  gate.disturb('exceed-throughput', rowPut, 2);
  gate.disturb('throttle', rowPut, Infinity);
  const disturbedBefore = gate.disturbed;
  const from = proxy.output().length;

  proxy.fakes.fakes['prov-b'].next({ usage: FIXED_USAGE });
  const answer = await callProxy(proxy, {
    provider: 'prov-b',
    token: account.token,
    headers: { 'x-proxy-user': 'batch-job' },
  });
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.text)).toMatchObject({
    usage: { prompt_tokens: FIXED_USAGE.inputTokens, completion_tokens: FIXED_USAGE.outputTokens },
  });

  // Every retry used up, then kept as in a store outage: the operator sees the warning naming the request.
  expect(
    await printed(
      new RegExp(`usage row spooled to disk[^\\n]*"request_id":"${answer.requestId}"[^\\n]*Throttling`),
      from,
      2 * EVENTUALLY_MS,
    ),
  ).toBe(true);
  expect(spooledIds()).toContain(answer.requestId);
  // The bound on sends per row (docs/failure-modes.md): the row writer's attempts, no nested retries.
  expect(sendsBeforeSpooled).toBe(ROW_ATTEMPTS);
  expect(gate.disturbed - disturbedBefore).toBeGreaterThanOrEqual(ROW_ATTEMPTS);

  // The partitions recover: the spool's replay writes the row, and the consumer folds its spend.
  gate.calm();
  const row = await rowOf(proxy, account.token, answer.requestId);
  expect(await printed(/"message":"spooled usage rows written"/, from)).toBe(true);
  expect(row).toMatchObject({
    status_code: 200,
    requester: 'batch-job',
    input_tokens: FIXED_USAGE.inputTokens,
    output_tokens: FIXED_USAGE.outputTokens,
  });
  expect(row.cost_usd).toBeCloseTo(expectedCostUsd('prov-b', FIXED_USAGE), 12);
  expect(row.cost_nanos).toBe(Math.round(expectedCostUsd('prov-b', FIXED_USAGE) * 1e9));
  expect(spooledIds()).not.toContain(answer.requestId);
  expect((await allRows(proxy, account.token)).filter((r) => r.id === answer.requestId)).toHaveLength(1);
  await eventually(async () =>
    (await spentNanos(account, 'batch-job')).requester >= (row.cost_nanos as number) ? true : undefined,
  );
  expect(await spentNanos(account, 'batch-job')).toEqual({ token: row.cost_nanos, requester: row.cost_nanos });
});

test("the token gate throttled past every retry: 503 with Retry-After in each endpoint's own error shape, nothing forwarded; served again when it recovers", async () => {
  const gateCall = (call: StoreCall) =>
    call.operation === 'UpdateItem' &&
    call.tables.some((table) => table.endsWith('rate-limits')) &&
    JSON.stringify(call.body).includes(`TOKEN#${proxy.account.tokenId}`);
  const before = upstreamCalls(proxy);
  for (const disturbance of ['exceed-throughput', 'throttle'] as const) {
    gate.disturb(disturbance, gateCall, Infinity);
    const disturbedBefore = gate.disturbed;
    const chat = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token });
    expect(chat.status).toBe(503);
    expect(chat.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(expectChatError(chat.text)).toMatchObject({ type: 'server_error', code: 'service_unavailable' });
    // Each request's gate call was sent as often as the store client retries, and no more.
    expect(gate.disturbed - disturbedBefore).toBe(STORE_CALL_ATTEMPTS);

    const messages = await callProxy(proxy, { provider: 'prov-a', token: proxy.account.token, stream: true });
    expect(messages.status).toBe(503);
    expect(messages.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(expectMessagesError(messages.text).type).toBe('overloaded_error');
    expect(upstreamCalls(proxy)).toBe(before);
    gate.calm();
  }
  const served = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token });
  expect(served.status).toBe(200);
  expect(upstreamCalls(proxy)).toBe(before + 1);
});
