/**
 * Partition heat of one busy token: one token (limit 60,000 a minute, 1,000 a second), one
 * requester label and one tag, priced chat requests with the stored key, counted through the relay
 * of partition-heat.test.ts in front of DynamoDB Local. Lambda's shape: many instances in this
 * process, each serving one request at a time and storing its row before taking the next. The
 * stream consumer (the local one, reading the stream once per batching window of the consumer
 * Lambda's mapping, as Lambda gathers a batch) folds the spend and the rollups through the same relay, so its writes
 * are counted too, each on the partition it writes. docs/deploy.md, "Partition ceilings", states
 * the figures asserted here: the token's gate spreads over its 4 items, at most 0.5 write units a
 * request on any of them; the rows, one unit each, over the account's 8 shards; the spend of the
 * token, the requester and the tag one write per consumer batch each; at most 3 write units a
 * request in all, rollups included.
 */
import { buildFoldDeps, buildLocalStoreClients } from '../../lambda/wiring/deps';
import { localStreamPoller } from '../../lambda/local/stats-consumer';
import type { StreamPoller } from '../../lambda/local/stream-poller';
import { parseToken } from '../../lambda/auth/proxy-token';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { callProxy, type CallResult } from './support/requests';
import { allRows } from './support/rows';
import { eventually } from '../support/patience';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';
import { partitionHeat } from './support/partition-heat';

const REQUESTS = Number(process.env.HEAT_REQUESTS ?? 400);
const INSTANCES = 12;
const LIMIT = 60_000;

jest.setTimeout(Math.max(300_000, REQUESTS * 500));

let gate: StoreGate;
const instances: InProcessProxy[] = [];
let consumer: StreamPoller;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  gate = await startStoreGate(endpoint);
  const env = { DYNAMODB_ENDPOINT: gate.endpoint };
  instances.push(await startInProcessProxy({ env }));
  while (instances.length < INSTANCES) instances.push(await startInProcessProxy({ env, sameStoreAs: instances[0] }));
  const config = instances[0]!.deps.config;
  // Read as the consumer Lambda's mapping gathers a batch: at most once per batching window (a stack's shortest advised, 10 s).
  consumer = localStreamPoller(buildFoldDeps(config, quiet), buildLocalStoreClients(config), 10_000);
  consumer.start();
});

afterAll(async () => {
  await consumer?.stop();
  for (const instance of instances.reverse()) await instance.close();
  await gate?.close();
});

const proxied = (call: StoreCall) => !call.tables.some((table) => table.endsWith('usage-stats'));

test(`${REQUESTS} priced requests of one token at ${LIMIT.toLocaleString('en')} a minute, one requester, one tag, over ${INSTANCES} one-request-at-a-time instances: at most 0.5 write units a request on any partition but the rollups', at most 3 in all`, async () => {
  const first = instances[0]!;
  const token = first.token;
  const tokenId = parseToken(token)!.tokenId;
  expect(
    (await first.api(`/api/tokens/${tokenId}/limits`, { method: 'PUT', token, body: { requests_per_minute: LIMIT } }))
      .status,
  ).toBe(200);
  const before = gate.answeredCalls().length;
  const results: CallResult[] = [];
  await Promise.all(
    instances.map(async (instance, worker) => {
      for (let index = worker; index < REQUESTS; index += INSTANCES) {
        results.push(
          await callProxy(instance, {
            provider: index % 2 ? 'prov-b' : 'prov-c',
            token,
            prompt: `busy ${index}`,
            headers: { 'x-proxy-user': 'checkout-service', 'x-proxy-tags': 'team=search' },
          }),
        );
        // As a Lambda invocation ends: its row stored before the instance takes another request.
        await instance.settled();
      }
    }),
  );
  expect(results.filter((result) => result.status !== 200).map((result) => result.text.slice(0, 200))).toEqual([]);

  // Every row there, once, priced.
  const rows = await allRows(first, token);
  expect(new Set(rows.map((row) => row.id))).toEqual(new Set(results.map((result) => result.requestId)));
  expect(rows.every((row) => typeof row.cost_usd === 'number' && row.cost_usd > 0)).toBe(true);
  const logged = rows.reduce((sum, row) => sum + (row.cost_nanos as number), 0);
  // The requester's spend, counted whether or not a budget is set: shown once one is.
  expect(
    (
      await first.api(`/api/budgets/requesters/checkout-service`, {
        method: 'PUT',
        token,
        body: { limit_usd: 1000, period: 'day' },
      })
    ).status,
  ).toBe(200);
  const spentNanos = async () => {
    const { requesters } = (await (await first.api('/api/budgets', { token })).json()) as {
      requesters: Array<{ spent_usd: number }>;
    };
    return Math.round(requesters[0]!.spent_usd * 1e9);
  };
  // The consumer folds the spend and the rollups of the same pages together: once the spend has every row, so do the rollups.
  await eventually(async () => ((await spentNanos()) >= logged ? true : undefined));
  await consumer.stop();
  expect(await spentNanos()).toBe(logged);
  const calls = gate.answeredCalls().slice(before);

  const heat = partitionHeat(calls.filter(proxied));
  const everything = partitionHeat(calls);
  const perRequest = (units: number) => Math.round((units / REQUESTS) * 1000) / 1000;
  const total = everything.reduce((sum, p) => sum + p.units, 0);
  console.log(
    `${perRequest(total)} write units per request in all, rollups included; hottest partitions but the rollups':\n  ${heat
      .slice(0, 16)
      .map((p) => `${p.table} ${p.partition}: ${perRequest(p.units)}`)
      .join('\n  ')}`,
  );

  // The gate: 4 items (60,000 a minute at 15,000 an item), 1 unit a request in all, none over 0.5 a request.
  const gates = heat.filter((p) => p.table === 'rateLimits');
  expect(gates.map((p) => p.partition).sort()).toEqual(
    [`TOKEN#${tokenId}`, `TOKEN#${tokenId}#1`, `TOKEN#${tokenId}#2`, `TOKEN#${tokenId}#3`].sort(),
  );
  expect(gates.filter((p) => perRequest(p.units) > 0.5).map((p) => `${p.partition}: ${perRequest(p.units)}`)).toEqual(
    [],
  );
  // One write a request, plus at most one more per instance and item (each instance's first request on an
  // item may have to set its counters for the new limit), plus the refused first attempts of writes that
  // met a bucket another instance had just started: DynamoDB bills a failed condition, and at this rate
  // they measured 0.35 to 0.6 of a unit a request (docs/decisions.md, "The gate's write").
  const settingWrites = INSTANCES * gates.length;
  const raceRetries = REQUESTS * 0.75;
  expect(gates.reduce((sum, p) => sum + p.units, 0)).toBeLessThanOrEqual(REQUESTS + settingWrites + raceRetries);

  // The rows: 1 unit each (a put under 1 KB), over the account's 8 shards, none over 0.5 a request.
  const rowPartitions = heat.filter((p) => p.table === 'usageLogs');
  expect(rowPartitions.reduce((sum, p) => sum + p.units, 0)).toBe(REQUESTS);
  expect(Math.max(...rowPartitions.map((p) => perRequest(p.units)))).toBeLessThanOrEqual(0.5);

  // The spend: the consumer's one write per batch on each of the token's, the requester's and the tag's partitions.
  const spend = heat.filter((p) => p.table === 'accounts' && /#[TRG]#/.test(p.partition));
  expect(spend).toHaveLength(3);
  expect(spend.filter((p) => perRequest(p.units) > 0.5).map((p) => `${p.partition}: ${perRequest(p.units)}`)).toEqual(
    [],
  );
  // The hottest partition but the rollups' at most 0.5 a request, and at most 3 write units a request in all.
  expect(perRequest(heat[0]!.units)).toBeLessThanOrEqual(0.5);
  expect(perRequest(total)).toBeLessThanOrEqual(3);
});
