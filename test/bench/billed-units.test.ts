/**
 * The cost model's write units are the ones DynamoDB bills, counted from the items a request
 * writes: a real stored-key request through the local server, counted by the benchmark's
 * forwarder in front of DynamoDB Local, whose own figure for a transaction is per table.
 */
import { buildContenders } from '../../bench/contenders';
import { billedWrite, itemBytes } from '../../bench/billed-units';
import { startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import { startProxyServer, type Child, type ProxyInstance } from '../../bench/processes';
import { countRoundTrips } from '../../bench/round-trips';
import { startStoreCounter, type StoreCounter } from '../../bench/store-counter';

let upstream: BenchUpstream;
let counter: StoreCounter;
let proxy: ProxyInstance;

beforeAll(async () => {
  upstream = await startBenchUpstream({ latencyMs: 0, chunks: 5, chunkIntervalMs: 0 });
  counter = await startStoreCounter(process.env.DYNAMODB_ENDPOINT!, 0);
  proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: counter.endpoint });
});
afterAll(async () => {
  await proxy?.stop();
  await counter?.close();
  await upstream?.close();
});

test("a stored-key request's transaction names its row and the token's two spend counters, billed 2 units each; DynamoDB Local reports fewer", async () => {
  const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
  const stored = buildContenders({ upstreamOrigin: upstream.origin, pipe: placeholder, proxy, portkey: placeholder }).find((c) => c.id === 'stored')!;
  const summary = await countRoundTrips({
    mode: 'stored key',
    spec: () => stored.spec(false),
    counter,
    upstream,
    warmup: 1,
    requests: 3,
    counterDelayMs: 0,
    tablePrefix: (table) => table,
  });
  const transaction = counter.calls.find((call) => call.operation === 'TransactWriteItems')!;
  expect(transaction.transactionItems).toBe(3);
  // Each item under 1 KB: 2 units per item in a transaction.
  expect(transaction.billedUnits).toBe(6);
  expect(transaction.units).toBeLessThan(transaction.billedUnits!);
  expect(summary.transactionItems).toBe(3);
  // The rate-limit counter's UpdateItem (1 unit) and the transaction.
  expect(summary.billedWriteUnits).toBe(7);
  expect(summary.writeUnits).toBeLessThan(summary.billedWriteUnits!);
  expect(summary.tailAfterResponseMs).toBeGreaterThan(0);
});

test("item sizes follow DynamoDB's rules, and a write is billed per started KB", () => {
  // "name" 4 + "abc" 3; "n" 1 + 12345 (5 digits: 3 bytes + 1); "ok" 2 + 1.
  expect(itemBytes({ name: { S: 'abc' }, n: { N: '12345' }, ok: { BOOL: true } })).toBe(7 + 5 + 3);
  expect(itemBytes({ m: { M: { a: { S: 'xy' } } } })).toBe(1 + 3 + 1 + 1 + 2);
  const big = { id: { S: 'x'.repeat(1500) } };
  expect(billedWrite('PutItem', { Item: big })).toEqual({ units: 2, transactionItems: 0 });
  expect(billedWrite('PutItem', { Item: { id: { S: 'small' } } })).toEqual({ units: 1, transactionItems: 0 });
  expect(
    billedWrite('TransactWriteItems', {
      TransactItems: [{ Put: { Item: big } }, { Update: { Key: { pk: { S: 'a' } }, ExpressionAttributeValues: { ':n': { N: '1' } } } }],
    }),
  ).toEqual({ units: 4 + 2, transactionItems: 2 });
  expect(billedWrite('GetItem', {})).toBeUndefined();
});
