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
