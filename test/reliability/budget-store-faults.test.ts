/**
 * Budgets when the store misbehaves: a budget read that fails refuses the
 * request (fail closed, nothing forwarded), and a row's put, sent again after
 * a lost answer or a cut connection, has its spend counted exactly once by
 * the stream consumer's fold.
 */
import { createHash } from 'node:crypto';
import { LOCAL_ALERT_QUEUE_PK } from '../../lambda/alerts/dynamodb/alert-queue';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls } from './support/requests';
import { rowOf } from './support/rows';
import { eventually } from '../support/patience';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';

const FIXED_USAGE = { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 };

let gate: StoreGate;
let proxy: ProxyServer;

beforeAll(async () => {
  gate = await startStoreGate(process.env.DYNAMODB_ENDPOINT!);
  proxy = await startProxy({ env: { DYNAMODB_ENDPOINT: gate.endpoint } });
});
afterAll(async () => {
  gate?.set('up');
  await proxy?.stop();
  await gate?.close();
});
afterEach(() => gate.set('up'));

async function budgetedAccount(name: string): Promise<Account> {
  const account = await proxy.createAccount(name);
  await proxy.saveKey(account.token, 'prov-a');
  await proxy.saveKey(account.token, 'prov-b');
  const response = await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: 100, period: 'month' },
  });
  expect(response.status).toBe(200);
  return account;
}

async function tokenSpentNanos(account: Account): Promise<number> {
  const tokens = (await (await proxy.api('/api/tokens', { token: account.token })).json()).tokens as Array<{
    token_id: string;
    budget: { spent_usd: number };
  }>;
  return Math.round(tokens.find((t) => t.token_id === account.tokenId)!.budget.spent_usd * 1e9);
}

test('the store down or throttling: a budgeted token is refused with 503, nothing forwarded', async () => {
  const account = await budgetedAccount('fail-closed');
  for (const mode of ['down', 'throttle'] as const) {
    gate.set(mode);
    const before = upstreamCalls(proxy);
    const chat = await callProxy(proxy, {
      provider: 'prov-b',
      token: account.token,
      headers: { 'x-proxy-user': 'ana' },
    });
    expect(chat.status).toBe(503);
    expect(expectChatError(chat.text).code).toBe('service_unavailable');
    const messages = await callProxy(proxy, { provider: 'prov-a', token: account.token, stream: true });
    expect(messages.status).toBe(503);
    expect(expectMessagesError(messages.text).type).toBe('overloaded_error');
    expect(upstreamCalls(proxy)).toBe(before);
    gate.set('up');
  }
});

const rowPut = (accountId: string) => (call: StoreCall) =>
  call.operation === 'PutItem' &&
  call.tables.some((table) => table.endsWith('usage-logs')) &&
  JSON.stringify(call.body).includes(accountId);

/** The token's spend for its month and in total, and the requester's for the day. */
async function allSpend(
  account: Account,
  requester: string,
): Promise<{ month: number; total: number; requester: number }> {
  const month = await tokenSpentNanos(account);
  await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: 100, period: 'total' },
  });
  const total = await tokenSpentNanos(account);
  await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: 100, period: 'month' },
  });
  await proxy.api(`/api/budgets/requesters/${requester}`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: 100, period: 'day' },
  });
  const requesters = (await (await proxy.api('/api/budgets', { token: account.token })).json()).requesters as Array<{
    requester: string;
    spent_usd: number;
  }>;
  return { month, total, requester: Math.round(requesters.find((r) => r.requester === requester)!.spent_usd * 1e9) };
}

/** The consumer folds spend after the row is stored: wait until the token's month shows at least `nanos`. */
async function foldedAtLeast(account: Account, nanos: number): Promise<void> {
  await eventually(async () => ((await tokenSpentNanos(account)) >= nanos ? true : undefined));
}

for (const disturbance of ['lose-answer', 'reset'] as const) {
  const what =
    disturbance === 'lose-answer' ? 'applied by the store, its answer lost' : 'cut off before the store saw it';
  test(`the row's put ${what}: sent again, the folded spend counts the row exactly once`, async () => {
    const account = await budgetedAccount(`spend-${disturbance}`);
    const disturbedBefore = gate.disturbed;
    gate.disturb(disturbance, rowPut(account.accountId));
    proxy.fakes.fakes['prov-b'].next({ usage: FIXED_USAGE });
    const result = await callProxy(proxy, {
      provider: 'prov-b',
      token: account.token,
      headers: { 'x-proxy-user': 'ana' },
    });
    expect(result.status).toBe(200);
    const row = await rowOf(proxy, account.token, result.requestId);
    expect(row.cost_nanos).toBeGreaterThan(0);
    expect(gate.disturbed - disturbedBefore).toBe(1);
    await foldedAtLeast(account, row.cost_nanos as number);
    expect(await allSpend(account, 'ana')).toEqual({
      month: row.cost_nanos,
      total: row.cost_nanos,
      requester: row.cost_nanos,
    });
    // A second row, undisturbed, adds exactly its own cost.
    proxy.fakes.fakes['prov-b'].next({ usage: FIXED_USAGE });
    const next = await callProxy(proxy, {
      provider: 'prov-b',
      token: account.token,
      headers: { 'x-proxy-user': 'ana' },
    });
    const nextRow = await rowOf(proxy, account.token, next.requestId);
    const both = (row.cost_nanos as number) + (nextRow.cost_nanos as number);
    await foldedAtLeast(account, both);
    expect(await allSpend(account, 'ana')).toEqual({ month: both, total: both, requester: both });
    expect(proxy.output()).not.toContain('usage row spooled');
  });
}

test('budgets add no round trip: with the key cached, the token gate and one BatchGetItem of both budgets and their spend go out together before forwarding', async () => {
  const account = await budgetedAccount('one-round-trip');
  await proxy.api('/api/budgets/requesters/ana', {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: 5, period: 'day' },
  });
  // Watch every store call (never disturbing one), and snapshot them when the provider receives the request.
  const seen: StoreCall[] = [];
  // The local server's poller reads the usage-logs stream and folds it into the rollups and the spend on its own
  // schedule (the spend fold's writes carry a shard watermark, `#w`): not a request's calls.
  const ANA_PARTITION = `#R#${createHash('sha256').update('ana').digest('base64url')}`;
  const isPollerCall = (call: StoreCall) =>
    /^(GetRecords|GetShardIterator|DescribeStream|ListStreams)$/.test(call.operation) ||
    call.tables.some((table) => table.endsWith('usage-stats')) ||
    // The local alert loop's poll of its queue, once a second.
    (call.operation === 'Query' && JSON.stringify(call.body).includes(`"${LOCAL_ALERT_QUEUE_PK}"`)) ||
    (call.operation === 'UpdateItem' &&
      call.tables.some((table) => table.endsWith('accounts')) &&
      JSON.stringify(call.body).includes('"#w"')) ||
    // After a fold it checks the batch's budgets for alerts: the warm-up request was bob's, the measured one ana's.
    (/^(BatchGetItem|GetItem)$/.test(call.operation) &&
      call.tables.some((table) => table.endsWith('accounts')) &&
      !JSON.stringify(call.body).includes(ANA_PARTITION));
  gate.disturb('reset', (call) => (isPollerCall(call) || seen.push(call), false), Number.MAX_SAFE_INTEGER);
  const warm = await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-user': 'bob' } });
  // Once the first request's row is stored, nothing of that request is left to write on the request path.
  await rowOf(proxy, account.token, warm.requestId);
  // Its spend is folded in by the consumer, after the row.
  await foldedAtLeast(account, 1);
  seen.length = 0;
  const fake = proxy.fakes.fakes['prov-b'];
  const received = fake.requests.length;
  fake.next({ latencyMs: 300 });
  const pending = callProxy(proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-user': 'ana' } });
  await fake.waitForRequests(received + 1);
  const beforeForwarding = [...seen];
  const result = await pending;
  expect(result.status).toBe(200);
  // Ana's day budget, of which nothing is spent yet (the warm-up was bob's), is the closest.
  expect(result.headers.get('x-proxy-budget-remaining-usd')).toBe('5.000000');

  const accounts = beforeForwarding.filter((call) => call.tables.some((table) => table.endsWith('accounts')));
  expect(accounts.map((call) => call.operation)).toEqual(['BatchGetItem']);
  const keys = JSON.stringify(accounts[0].body);
  // The token's and the requester's one item each (budget and spend), each in the subject's own partition.
  for (const part of ['#T#', '#R#', '"BUDGET"']) expect(keys).toContain(part);
  expect(keys).not.toContain('SPEND#');
  // The token and the stored key are not read: the gate holds the one, the instance's cache the other.
  for (const part of ['"TOKEN#', '"KEY#']) expect(keys).not.toContain(part);
  // The only other call before forwarding is the token gate's, sent in parallel.
  const others = beforeForwarding.filter((call) => !accounts.includes(call));
  expect(
    others.map((call) => [call.operation, call.tables.map((table) => table.replace(/^.*-(?=rate-limits$)/, ''))]),
  ).toEqual([['UpdateItem', ['rate-limits']]]);
});
