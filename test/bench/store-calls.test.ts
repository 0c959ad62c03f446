/**
 * Store calls per proxied request, counted by the benchmark's forwarder in front of DynamoDB Local
 * on the real local server: warm, a stored-key or pass-through request makes one call before its
 * upstream call (the token gate) and one after its answer (the row's transaction). A named
 * requester or a token budget adds a read, in the same wave; a key saved or a token revoked
 * through the server applies to the very next request.
 */
import { buildContenders, type Contender } from '../../bench/contenders';
import { startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import type { RequestSpec } from '../../bench/load-protocol';
import { startProxyServer, type Child, type ProxyInstance } from '../../bench/processes';
import { countRoundTrips, type RoundTripSummary } from '../../bench/round-trips';
import { startStoreCounter, type StoreCounter } from '../../bench/store-counter';
import { parseToken } from '../../lambda/auth/proxy-token';

let upstream: BenchUpstream;
let counter: StoreCounter;
let proxy: ProxyInstance;
let contenders: Contender[];
const HOLD_BACK_MS = 25;

beforeAll(async () => {
  upstream = await startBenchUpstream({ latencyMs: 0, chunks: 5, chunkIntervalMs: 0 });
  // Each store answer held back: calls started together then surely overlap, and a call that waited for another starts visibly later.
  counter = await startStoreCounter(process.env.DYNAMODB_ENDPOINT!, HOLD_BACK_MS);
  proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: counter.endpoint });
  const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
  contenders = buildContenders({ upstreamOrigin: upstream.origin, pipe: placeholder, proxy, portkey: placeholder });
});
afterAll(async () => {
  await proxy?.stop();
  await counter?.close();
  await upstream?.close();
});

const contender = (id: string) => contenders.find((c) => c.id === id)!;
const tableOf = (table: string) => table.slice(proxy.tablePrefix.length);

function count(spec: (index: number) => RequestSpec, requests = 4): Promise<RoundTripSummary> {
  return countRoundTrips({ mode: 'counted', spec, counter, upstream, warmup: 2, requests, counterDelayMs: HOLD_BACK_MS, tablePrefix: tableOf });
}

function manage(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(proxy.url + path, {
    method,
    headers: { authorization: `Bearer ${proxy.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

test.each(['stored', 'passThrough'])('%s: one call before forwarding (the token gate) and one after the answer', async (id) => {
  const summary = await count(() => contender(id).spec(false));
  expect(summary.callsBeforeUpstream).toBe(1);
  expect(summary.wavesBeforeUpstream).toBe(1);
  expect(summary.callsAfterResponse).toBe(1);
  expect(summary.callsDuringResponse).toBe(0);
  // Per request: the gate's UpdateItem, and the transaction of the row with its spend counters.
  expect(summary.operations).toEqual({ 'UpdateItem rate-limits': 1, [`TransactWriteItems usage-logs+${proxy.tablePrefix}accounts`]: 1 });
});

test('a request naming its requester reads that requester\'s budget beside the gate: two calls, one wave', async () => {
  const stored = contender('stored');
  const summary = await count(() => {
    const spec = stored.spec(false);
    return { ...spec, headers: { ...spec.headers, 'x-proxy-user': 'alice@example.com' } };
  });
  expect(summary.callsBeforeUpstream).toBe(2);
  expect(summary.wavesBeforeUpstream).toBe(1);
  expect(summary.operations['BatchGetItem accounts']).toBe(1);
});

test('a token with a budget: its budget is read beside the gate once this instance has seen it, and dropped when the budget goes', async () => {
  const { tokenId } = parseToken(proxy.token)!;
  expect((await manage('PUT', `/api/tokens/${tokenId}/budget`, { limit_usd: 1000, period: 'month' })).status).toBe(200);
  try {
    const withBudget = await count(() => contender('stored').spec(false));
    expect(withBudget.callsBeforeUpstream).toBe(2);
    expect(withBudget.wavesBeforeUpstream).toBe(1);
  } finally {
    expect((await manage('DELETE', `/api/tokens/${tokenId}/budget`)).status).toBe(204);
  }
  const without = await count(() => contender('stored').spec(false));
  expect(without.callsBeforeUpstream).toBe(1);
});
