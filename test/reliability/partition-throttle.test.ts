/**
 * At a partition's ceiling (docs/deploy.md, "Partition ceilings"): DynamoDB answers throttling
 * errors for one partition only. A request whose reads before forwarding land there is retried by
 * the store client, then refused with 503 and Retry-After, never forwarded; a request of the same
 * account whose partitions are not throttled is served. A row whose shard keeps refusing its write
 * is retried with backoff and stored exactly once.
 */
import { createHash } from 'node:crypto';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { rowOf } from './support/rows';
import { startStoreGate, type StoreCall, type StoreGate } from './support/store-gate';

let gate: StoreGate;
let proxy: ProxyServer;

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  gate = await startStoreGate(endpoint);
  proxy = await startProxy({ env: { DYNAMODB_ENDPOINT: gate.endpoint } });
  for (const requester of ['hot', 'cool']) {
    const response = await proxy.api(`/api/budgets/requesters/${requester}`, { method: 'PUT', token: proxy.account.token, body: { limit_usd: 100, period: 'day' } });
    expect(response.status).toBe(200);
  }
});

afterAll(async () => {
  await proxy?.stop();
  await gate?.close();
});

test("throttling on one requester's partition: its requests get 503 with Retry-After after retries and are not forwarded; the account's other requesters are served", async () => {
  const hotPartition = `ACCOUNT#${proxy.account.accountId}#R#${createHash('sha256').update('hot').digest('base64url')}`;
  const readsHot = (call: StoreCall) => ['GetItem', 'BatchGetItem'].includes(call.operation) && JSON.stringify(call.body).includes(hotPartition);
  gate.disturb('throttle', readsHot, 1_000);
  const upstream = proxy.fakes.fakes['prov-b'];
  const before = upstream.requests.length;

  const hot = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, headers: { 'x-proxy-user': 'hot' } });
  expect(hot.status).toBe(503);
  expect(hot.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(JSON.parse(hot.text)).toMatchObject({ error: { code: 'service_unavailable' } });
  // Retried before giving up: more than one throttled answer for the one request.
  expect(gate.disturbed).toBeGreaterThan(1);
  expect(upstream.requests.length).toBe(before);

  const cool = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, headers: { 'x-proxy-user': 'cool' } });
  expect(cool.status).toBe(200);
  expect(upstream.requests.length).toBe(before + 1);
  gate.calm();
});

test("throttling on the account's row shards, many answers in a row: the answer is served, the row is stored once, its spend counted once", async () => {
  const rowWrites = (call: StoreCall) => call.operation === 'TransactWriteItems' && call.tables.some((table) => table.endsWith('usage-logs')) && JSON.stringify(call.body).includes(`"${proxy.account.accountId}#`);
  const disturbedBefore = gate.disturbed;
  // Eighteen throttled answers in a row for the row's transaction.
  gate.disturb('throttle', rowWrites, 18);
  const answer = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, headers: { 'x-proxy-user': 'cool' } });
  expect(answer.status).toBe(200);
  const row = await rowOf(proxy, proxy.account.token, answer.requestId);
  expect(gate.disturbed - disturbedBefore).toBe(18);
  expect(row).toMatchObject({ id: answer.requestId, status_code: 200 });
  const logs = (await (await proxy.api('/api/logs?limit=100', { token: proxy.account.token })).json()) as { items: Array<{ id: string }> };
  expect(logs.items.filter((item) => item.id === answer.requestId)).toHaveLength(1);
  const { requesters } = (await (await proxy.api('/api/budgets', { token: proxy.account.token })).json()) as { requesters: Array<{ requester: string; spent_usd: number }> };
  const rows = (await (await proxy.api('/api/logs?limit=100&requester=cool', { token: proxy.account.token })).json()) as { items: Array<{ cost_usd: number }> };
  const nanos = (values: number[]) => values.reduce((sum, value) => sum + Math.round(value * 1e9), 0);
  expect(nanos([requesters.find((r) => r.requester === 'cool')!.spent_usd])).toBe(nanos(rows.items.map((r) => r.cost_usd)));
});
