/**
 * Budgets when the store misbehaves: a budget read that fails refuses the
 * request (fail closed, nothing forwarded), and a spend ADD whose answer is
 * lost after the store applied it is not sent again (counted once).
 */
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls } from './support/requests';
import { rowOf } from './support/rows';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';

jest.setTimeout(120_000);

const FIXED_USAGE = { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const response = await proxy.api(`/api/tokens/${account.tokenId}/budget`, { method: 'PUT', token: account.token, body: { limit_usd: 100, period: 'month' } });
  expect(response.status).toBe(200);
  return account;
}

async function tokenSpentNanos(account: Account): Promise<number> {
  const tokens = (await (await proxy.api('/api/tokens', { token: account.token })).json()).tokens as Array<{ token_id: string; budget: { spent_usd: number } }>;
  return Math.round(tokens.find((t) => t.token_id === account.tokenId)!.budget.spent_usd * 1e9);
}

test('the store down or throttling: a budgeted token is refused with 503, nothing forwarded', async () => {
  const account = await budgetedAccount('fail-closed');
  for (const mode of ['down', 'throttle'] as const) {
    gate.set(mode);
    const before = upstreamCalls(proxy);
    const chat = await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-user': 'ana' } });
    expect(chat.status).toBe(503);
    expect(expectChatError(chat.text).code).toBe('service_unavailable');
    const messages = await callProxy(proxy, { provider: 'prov-a', token: account.token, stream: true });
    expect(messages.status).toBe(503);
    expect(expectMessagesError(messages.text).type).toBe('overloaded_error');
    expect(upstreamCalls(proxy)).toBe(before);
    gate.set('up');
  }
});

const spendWrite = (accountId: string, sk: string) => (call: StoreCall) =>
  call.operation === 'UpdateItem' && JSON.stringify(call.body).includes(`ACCOUNT#${accountId}`) && JSON.stringify(call.body).includes(sk);

test('a spend ADD whose answer is lost (the store applied it) is counted once', async () => {
  const account = await budgetedAccount('lost-answer');
  const disturbedBefore = gate.disturbed;
  // Both counters of the token: its lifetime total and its month.
  gate.disturb('lose-answer', spendWrite(account.accountId, `BUDGET#T#${account.tokenId}`));
  gate.disturb('lose-answer', spendWrite(account.accountId, '"SPEND#'));
  proxy.fakes.fakes['prov-b'].next({ usage: FIXED_USAGE });
  const result = await callProxy(proxy, { provider: 'prov-b', token: account.token });
  expect(result.status).toBe(200);
  const row = await rowOf(proxy, account.token, result.requestId);
  expect(row.cost_nanos).toBeGreaterThan(0);
  await sleep(1500);
  expect(gate.disturbed - disturbedBefore).toBe(2);
  expect(await tokenSpentNanos(account)).toBe(row.cost_nanos);
  // Monthly and lifetime spend agree: neither counter was added twice.
  await proxy.api(`/api/tokens/${account.tokenId}/budget`, { method: 'PUT', token: account.token, body: { limit_usd: 100, period: 'total' } });
  expect(await tokenSpentNanos(account)).toBe(row.cost_nanos);
});

test('a spend ADD cut off in flight is not sent again: the counter misses that row, and the log says so', async () => {
  const account = await budgetedAccount('cut-off');
  // Only the month counter: whether the store saw it is unknowable to the proxy, so it is not resent.
  gate.disturb('reset', spendWrite(account.accountId, '"SPEND#'));
  proxy.fakes.fakes['prov-b'].next({ usage: FIXED_USAGE });
  const result = await callProxy(proxy, { provider: 'prov-b', token: account.token });
  const row = await rowOf(proxy, account.token, result.requestId);
  await sleep(1000);
  expect(await tokenSpentNanos(account)).toBe(0);
  expect(proxy.output()).toContain('"message":"budget spend not updated"');
  expect(proxy.output()).toContain(result.requestId);
  // The lifetime counter was not disturbed: it has the row.
  await proxy.api(`/api/tokens/${account.tokenId}/budget`, { method: 'PUT', token: account.token, body: { limit_usd: 100, period: 'total' } });
  expect(await tokenSpentNanos(account)).toBe(row.cost_nanos);
});

test('budgets cost no store call of their own: token, stored key, budgets and spend are one BatchGetItem before forwarding', async () => {
  const account = await budgetedAccount('one-round-trip');
  await proxy.api('/api/budgets/requesters/ana', { method: 'PUT', token: account.token, body: { limit_usd: 5, period: 'day' } });
  // Watch every store call (never disturbing one), and snapshot them when the provider receives the request.
  const seen: StoreCall[] = [];
  let lastCallAt = Date.now();
  // The local server's poller reads the usage-logs stream on its own schedule: not a request's call.
  const isStreamRead = (call: StoreCall) => /^(GetRecords|GetShardIterator|DescribeStream|ListStreams)$/.test(call.operation);
  gate.disturb('reset', (call) => (isStreamRead(call) || (seen.push(call), (lastCallAt = Date.now())), false), Number.MAX_SAFE_INTEGER);
  await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-user': 'ana' } });
  // The earlier requests' row, rollup, spend and last-used writes land first: the store goes quiet.
  while (Date.now() - lastCallAt < 1000) await sleep(100);
  seen.length = 0;
  const fake = proxy.fakes.fakes['prov-b'];
  const received = fake.requests.length;
  fake.next({ latencyMs: 300 });
  const pending = callProxy(proxy, { provider: 'prov-b', token: account.token, headers: { 'x-proxy-user': 'ana' } });
  await fake.waitForRequests(received + 1);
  const beforeForwarding = [...seen];
  const result = await pending;
  expect(result.status).toBe(200);
  expect(result.headers.get('x-proxy-budget-remaining-usd')).toMatch(/^4\.\d{6}$/);

  const accounts = beforeForwarding.filter((call) => call.tables.some((table) => table.endsWith('accounts')));
  expect(accounts.map((call) => call.operation)).toEqual(['BatchGetItem']);
  const keys = JSON.stringify(accounts[0].body);
  for (const part of ['"TOKEN#', '"KEY#prov-b"', '"BUDGET#T#', '"BUDGET#R#', '"SPEND#']) expect(keys).toContain(part);
  // The only other call before forwarding is the rate limit's, sent in parallel.
  expect(beforeForwarding.filter((call) => !accounts.includes(call)).map((call) => call.operation)).toEqual(['UpdateItem']);
});
