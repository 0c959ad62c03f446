/**
 * Budgets under load, across two server processes on one DynamoDB: the spend
 * folded by their two stream consumers ends up exactly equal to the sum of the rows' cost, and a budget
 * reached mid-run overshoots by no more than the cost of the requests still
 * in flight (docs/budgets.md, "Overshoot").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAllFakes, type AllFakes, type ProviderId } from '../fakes/start-fakes';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { runPool } from './support/pool';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls } from './support/requests';
import { allRows, waitForRowCount, type Row } from './support/rows';
import { eventually } from '../support/patience';

jest.setTimeout(300_000);

let fakes: AllFakes;
let first: ProxyServer;
let second: ProxyServer;
const ownKey = 'client-own-key-for-budget-instances-01';
// Instances on one store share the local master key, as a real deployment shares its KMS key.
const sharedDataDir = mkdtempSync(join(tmpdir(), 'budget-instances-'));

beforeAll(async () => {
  fakes = await startAllFakes({ behaviour: { usage: 'random' }, seed: 1515 });
  const tablePrefix = `bud${Date.now().toString(36)}-`;
  // The rate limit is not under test: every request must reach the budget step.
  const env = { RATE_LIMIT_PER_MINUTE: '10000000', DATA_DIR: sharedDataDir };
  [first, second] = [await startProxy({ fakes, tablePrefix, env }), await startProxy({ fakes, tablePrefix, env })];
  for (const proxy of [first, second]) proxy.secrets.add(ownKey);
});

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await fakes?.close();
  rmSync(sharedDataDir, { recursive: true, force: true });
});

interface BudgetAnswer {
  limit_usd: number;
  spent_usd: number;
}

async function put(account: Account, path: string, body: object): Promise<void> {
  const response = await first.api(path, { method: 'PUT', token: account.token, body });
  expect(response.status).toBe(200);
}

async function tokenSpent(account: Account): Promise<number> {
  const tokens = (await (await second.api('/api/tokens', { token: account.token })).json()).tokens as Array<{
    token_id: string;
    budget: BudgetAnswer | null;
  }>;
  return Math.round(tokens.find((t) => t.token_id === account.tokenId)!.budget!.spent_usd * 1e9);
}

async function requesterSpent(account: Account): Promise<Record<string, number>> {
  const requesters = (await (await first.api('/api/budgets', { token: account.token })).json()).requesters as Array<
    BudgetAnswer & { requester: string }
  >;
  return Object.fromEntries(requesters.map((r) => [r.requester, Math.round(r.spent_usd * 1e9)]));
}

const sumCost = (rows: Row[]) => rows.reduce((sum, row) => sum + (row.cost_nanos as number), 0);

/**
 * How many of the 500 requests are in flight at once. With all 500 at once, one DynamoDB Local on a
 * two-core machine leaves some requests' store reads past the 10 s budget before forwarding, and the
 * proxy rightly refuses them (503, docs/failure-modes.md#deadlines); 100 keeps the store in its budget.
 */
const CONCURRENT = Number(process.env.BUDGET_CONCURRENCY ?? 100);

/**
 * Fresh instances are slow for their first seconds (the store's connections, the usage-logs stream
 * poller catching up): a store call that takes longer than the client's limit is refused with 503
 * (fail closed), which would test the warm-up rather than the spend.
 */
async function warmUp(): Promise<void> {
  const account = await first.createAccount('warm-up');
  second.secrets.add(account.token);
  for (let round = 0; round < 20; round++) {
    const results = await runPool(40, 20, (index) =>
      callProxy(index % 2 ? second : first, {
        provider: 'prov-b',
        token: account.token,
        providerKey: ownKey,
        prompt: `warm ${index}`,
      }),
    );
    if (results.every((r) => r.status === 200)) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

test(`500 requests over two instances, ${CONCURRENT} in flight at once: the spend equals the sum of the rows, per token and per requester`, async () => {
  await warmUp();
  const account = await first.createAccount('exact-spend');
  second.secrets.add(account.token);
  await put(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: 1000, period: 'month' });
  const requesters = ['ana', 'ben', 'cy'];
  for (const requester of requesters)
    await put(account, `/api/budgets/requesters/${requester}`, { limit_usd: 500, period: 'day' });

  const results = await runPool(500, CONCURRENT, (index) =>
    callProxy(index % 2 ? second : first, {
      provider: (['prov-a', 'prov-b', 'prov-e'] as ProviderId[])[index % 3],
      token: account.token,
      // Pass-through, as a team sharing one proxy token with their own provider keys would.
      providerKey: ownKey,
      stream: index % 4 < 2,
      prompt: `spend ${index}`,
      headers: index % 5 === 4 ? {} : { 'x-proxy-user': requesters[index % 3] },
    }),
  );
  expect(results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.text.slice(0, 200)}`)).toEqual([]);

  const rows = await waitForRowCount(first, account.token, 500, 60_000);
  expect(rows).toHaveLength(500);
  expect(sumCost(rows)).toBeGreaterThan(0);
  // The servers' stream consumers fold the spend after the rows: wait until the token's has them all.
  await eventually(async () => ((await tokenSpent(account)) >= sumCost(rows) ? true : undefined));
  const spent = { token: await tokenSpent(account), requesters: await requesterSpent(account) };
  expect(spent.token).toBe(sumCost(rows));
  for (const requester of requesters)
    expect(spent.requesters[requester]).toBe(sumCost(rows.filter((row) => row.requester === requester)));
});

test('a budget reached mid-run: refusals follow, and the overshoot stays within the requests in flight', async () => {
  const account = await first.createAccount('overshoot');
  second.secrets.add(account.token);
  const CONCURRENCY = 20;
  // Measure one request's cost range first, then allow about 60 requests' worth.
  const probe = await runPool(10, 10, (index) =>
    callProxy(first, { provider: 'prov-b', token: account.token, providerKey: ownKey, prompt: `probe ${index}` }),
  );
  expect(probe.every((r) => r.status === 200)).toBe(true);
  const probeRows = await waitForRowCount(first, account.token, 10);
  const maxCost = Math.max(...probeRows.map((row) => row.cost_nanos as number));
  const limitNanos = Math.ceil(((sumCost(probeRows) / 10) * 60) / 1000) * 1000;
  await put(account, '/api/budgets/requesters/batch', { limit_usd: limitNanos / 1e9, period: 'month' });

  const before = upstreamCalls(first);
  const results = await runPool(300, CONCURRENCY, (index) =>
    callProxy(index % 2 ? second : first, {
      provider: index % 3 ? 'prov-b' : 'prov-a',
      token: account.token,
      providerKey: ownKey,
      prompt: `batch ${index}`,
      headers: { 'x-proxy-user': 'batch' },
    }),
  );
  const admitted = results.filter((r) => r.status === 200);
  const refused = results.map((r, index) => ({ r, index })).filter(({ r }) => r.status !== 200);
  expect(admitted.length + refused.length).toBe(300);
  expect(refused.length).toBeGreaterThan(0);
  for (const { r, index } of refused) {
    expect(r.status).toBe(402);
    const message = index % 3 ? expectChatError(r.text).message : expectMessagesError(r.text).message;
    expect(message).toContain('requester "batch"');
  }
  // Only admitted requests reached a provider.
  expect(upstreamCalls(first) - before).toBe(admitted.length);

  const rows = await waitForRowCount(first, account.token, 10 + 300, 60_000);
  const batchRows = rows.filter((row) => row.requester === 'batch');
  expect(batchRows.filter((row) => row.status_code === 402).every((row) => row.cost_nanos === 0)).toBe(true);
  // Every row is stored; the consumers fold its spend after it.
  await eventually(async () => ((await requesterSpent(account)).batch >= sumCost(batchRows) ? true : undefined));
  const spent = (await requesterSpent(account)).batch;
  expect(spent).toBe(sumCost(batchRows));
  expect(spent).toBeGreaterThanOrEqual(limitNanos);
  // The documented bound: what was admitted before earlier requests' spend was recorded.
  // With this many clients, at most each client's request in flight plus one whose row was still being written.
  const providerMax = Math.max(maxCost, ...batchRows.map((row) => row.cost_nanos as number));
  expect(spent - limitNanos).toBeLessThanOrEqual(2 * CONCURRENCY * providerMax);
  const all = await allRows(first, account.token, 'status=error');
  expect(all.filter((row) => row.status_code === 402)).toHaveLength(refused.length);
});
