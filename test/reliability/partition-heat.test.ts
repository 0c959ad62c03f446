/**
 * Partition heat: one account with many tokens and requesters, through a relay in front of
 * DynamoDB Local that sees every call the store answers. The write units each partition takes
 * per request must leave one account far from DynamoDB's per-partition limit (1,000 write units
 * a second): docs/deploy.md, "Partition ceilings", states the bounds asserted here. Rows and rollups
 * are shown apart; every row must still be exact. HEAT_REQUESTS (default 400) sizes the run: the
 * hottest of 8 row shards stays at or under 0.2 units a request (80 of 400 rows where 50 is the
 * average) except about once in 15,000 runs; fewer requests make that bound a matter of luck.
 */
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy, type CallResult } from './support/requests';
import { waitForRowCount } from './support/rows';
import { runPool } from './support/pool';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';
import { partitionHeat, readHeat } from './support/partition-heat';
import { ROW_SHARDS } from '../../lambda/usage/dynamodb/row-shards';
import { eventually } from '../support/patience';

const REQUESTS = Number(process.env.HEAT_REQUESTS ?? 400);
const CONCURRENCY = 12;
const TOKENS = 20;
const REQUESTERS = 50;

jest.setTimeout(Math.max(300_000, REQUESTS * 400));

let gate: StoreGate;
let proxy: ProxyServer;
const tokens: Array<{ token: string; tokenId: string }> = [];

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  gate = await startStoreGate(endpoint);
  proxy = await startProxy({ env: { DYNAMODB_ENDPOINT: gate.endpoint, RATE_LIMIT_PER_MINUTE: '10000000' } });
  tokens.push({ token: proxy.account.token, tokenId: proxy.account.tokenId });
  while (tokens.length < TOKENS) {
    const response = await proxy.api('/api/tokens', {
      token: proxy.account.token,
      body: { name: `team-${tokens.length}` },
    });
    const body = (await response.json()) as { token: string; token_id: string };
    proxy.secrets.add(body.token);
    tokens.push({ token: body.token, tokenId: body.token_id });
  }
  // Budgets on every token and requester, so the request path reads all it can read before forwarding.
  for (const { tokenId } of tokens) {
    expect(
      (
        await proxy.api(`/api/tokens/${tokenId}/budget`, {
          method: 'PUT',
          token: proxy.account.token,
          body: { limit_usd: 1000, period: 'month' },
        })
      ).status,
    ).toBe(200);
  }
  for (let i = 0; i < REQUESTERS; i++) {
    expect(
      (
        await proxy.api(`/api/budgets/requesters/${requester(i)}`, {
          method: 'PUT',
          token: proxy.account.token,
          body: { limit_usd: 1000, period: 'day' },
        })
      ).status,
    ).toBe(200);
  }
});

afterAll(async () => {
  await proxy?.stop();
  await gate?.close();
});

const requester = (index: number) => `user-${index % REQUESTERS}`;

const proxied = (call: StoreCall) => !call.tables.some((table) => table.endsWith('usage-stats'));

test(`${REQUESTS} priced chat requests from one account (${TOKENS} tokens, ${REQUESTERS} requesters) at concurrency ${CONCURRENCY}: 1 row write unit per request, at most 0.2 on the hottest row shard and 0.5 on any partition but the rollups'`, async () => {
  const before = gate.answeredCalls().length;
  const results: CallResult[] = await runPool(REQUESTS, CONCURRENCY, (index) =>
    callProxy(proxy, {
      provider: index % 2 ? 'prov-b' : 'prov-c',
      token: tokens[index % TOKENS]!.token,
      prompt: `heat ${index}`,
      headers: { 'x-proxy-user': requester(index * 7) },
    }),
  );
  expect(results.filter((result) => result.status !== 200).map((result) => result.text.slice(0, 200))).toEqual([]);

  // Every row exact: one per request, with its cost, and the spend it added counted once.
  const rows = await waitForRowCount(proxy, proxy.account.token, REQUESTS, 60_000 + REQUESTS * 50);
  expect(new Set(rows.map((row) => row.id))).toEqual(new Set(results.map((result) => result.requestId)));
  expect(rows.every((row) => row.status_code === 200 && typeof row.cost_usd === 'number' && row.cost_usd > 0)).toBe(
    true,
  );
  const nanos = (usd: number[]) => usd.reduce((sum, value) => sum + Math.round(value * 1e9), 0);
  const logged = nanos(rows.map((row) => row.cost_usd as number));
  const spent = async () => {
    const { requesters } = (await (await proxy.api('/api/budgets', { token: proxy.account.token })).json()) as {
      requesters: Array<{ spent_usd: number }>;
    };
    const listed = (await (await proxy.api('/api/tokens', { token: proxy.account.token })).json()) as {
      tokens: Array<{ budget: { spent_usd: number } | null }>;
    };
    return { requesters, listed };
  };
  // The spend is folded by the server's stream consumer after the rows: wait until it has all of them.
  await eventually(async () => {
    const { requesters, listed } = await spent();
    const tokenSpend = nanos(listed.tokens.map((t) => t.budget?.spent_usd ?? 0));
    return nanos(requesters.map((r) => r.spent_usd)) >= logged && tokenSpend >= logged ? true : undefined;
  });
  const { requesters, listed } = await spent();
  expect(nanos(listed.tokens.map((t) => t.budget?.spent_usd ?? 0))).toBe(logged);
  expect(nanos(requesters.map((r) => r.spent_usd))).toBe(logged);

  const calls = gate.answeredCalls().slice(before);
  const heat = partitionHeat(calls.filter(proxied));
  const rollups = partitionHeat(calls.filter((call) => !proxied(call)));
  const perRequest = (units: number) => Math.round((units / REQUESTS) * 1000) / 1000;
  const show = (list: typeof heat) => list.slice(0, 5).map((p) => `${p.table} ${p.partition}: ${perRequest(p.units)}`);
  // Shown apart, for a reader of the test's output.
  console.log(
    `${perRequest(heat.filter((p) => p.table === 'usageLogs').reduce((sum, p) => sum + p.units, 0))} row write units per request in all; write units per request, hottest partitions:\n  ${show(heat).join('\n  ')}\nrollups:\n  ${show(rollups).join('\n  ')}`,
  );

  const hottest = heat[0]!;
  expect(`${hottest.table} ${hottest.partition}: ${perRequest(hottest.units) <= 0.5 ? 'at most' : 'over'} 0.5`).toBe(
    `${hottest.table} ${hottest.partition}: at most 0.5`,
  );
  // The rows: 1 unit each (a put under 1 KB), spread over the account's shards, the hottest at most 0.2 a request.
  const rowPartitions = heat.filter((p) => p.table === 'usageLogs');
  expect(rowPartitions.length).toBe(ROW_SHARDS);
  expect(rowPartitions.reduce((sum, p) => sum + p.units, 0)).toBe(REQUESTS);
  expect(perRequest(Math.max(...rowPartitions.map((p) => p.units)))).toBeLessThanOrEqual(0.2);
  // The spend, folded by the consumer: each token's and requester's in its own partition, the account's takes next to nothing.
  const counters = heat.filter((p) => p.table === 'accounts');
  expect(counters.length).toBeGreaterThanOrEqual(TOKENS + REQUESTERS);
  expect(
    counters.filter((p) => perRequest(p.units) > 0.5).map((p) => `${p.partition}: ${perRequest(p.units)}`),
  ).toEqual([]);
  const accountPartition = counters.find((p) => p.partition === `ACCOUNT#${proxy.account.accountId}`);
  expect(perRequest(accountPartition?.units ?? 0)).toBeLessThanOrEqual(0.05);

  // Reads before forwarding: under half of a partition's 3,000 read units a second at 1,000 requests a second.
  const reads = readHeat(calls.filter(proxied));
  expect(perRequest(reads[0]?.units ?? 0)).toBeLessThanOrEqual(1.5);
});
