/**
 * The budgets' yardstick is the request path's own pre-upstream store wave: the same calls, on the
 * same tables, all in flight together. Counted by the benchmark's forwarder in front of DynamoDB
 * Local, for a real stored-key request through the local server and for one yardstick wave.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContenders } from '../../bench/contenders';
import { monotonicMs, startBenchUpstream, type BenchUpstream } from '../../bench/fake-upstream';
import { startProxyServer, type Child, type ProxyInstance } from '../../bench/processes';
import { openStoreYardstick } from '../../bench/store-call';
import { startStoreCounter, type StoreCall, type StoreCounter } from '../../bench/store-counter';

const HOLD_MS = 20;
let upstream: BenchUpstream;
let counter: StoreCounter;
let proxy: ProxyInstance;
const dataDir = mkdtempSync(join(tmpdir(), 'yardstick-test-'));

beforeAll(async () => {
  upstream = await startBenchUpstream({ latencyMs: 0, chunks: 5, chunkIntervalMs: 0 });
  counter = await startStoreCounter(process.env.DYNAMODB_ENDPOINT!, HOLD_MS);
  proxy = await startProxyServer({ upstreamOrigin: upstream.origin, dynamoEndpoint: counter.endpoint });
});
afterAll(async () => {
  await proxy?.stop();
  await counter?.close();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Until the store has been idle for half a second: the writes after an answer have all landed. */
const quiet = async () => {
  const deadline = monotonicMs() + 10_000;
  while (monotonicMs() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const last = counter.calls.reduce((latest, call) => Math.max(latest, call.endMs), 0);
    if (counter.inFlight() === 0 && monotonicMs() - last > 500) return;
  }
};
const kinds = (calls: readonly StoreCall[]) => calls.map((call) => `${call.operation} ${call.table.slice(proxy.tablePrefix.length)}`).sort();
/** Every call started before any of them ended: one wave. */
const oneWave = (calls: readonly StoreCall[]) => Math.max(...calls.map((c) => c.startMs)) < Math.min(...calls.map((c) => c.endMs));

test("one yardstick wave makes the same store calls as a stored-key request makes before forwarding, in one wave; the second one meets a row's write in flight", async () => {
  const placeholder = { url: 'http://127.0.0.1:1', pid: 0 } as Child;
  const spec = buildContenders({ upstreamOrigin: upstream.origin, pipe: placeholder, proxy, portkey: placeholder }).find((c) => c.id === 'stored')!.spec(false);
  const send = async () => {
    const response = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
  };
  await send(); // cold caches and clients out of the way
  await quiet();
  counter.reset();
  upstream.startRecording();
  const started = monotonicMs();
  await send();
  const arrival = upstream.arrivals[0]!;
  upstream.stopRecording();
  await quiet();
  const beforeUpstream = counter.calls.filter((call) => call.startMs >= started && call.startMs < arrival);

  const yardstick = openStoreYardstick(counter.endpoint, { tablePrefix: proxy.tablePrefix, token: proxy.token, dataDir });
  try {
    await yardstick.sample(1);
    await quiet();
    counter.reset();
    const samples = await yardstick.sample(1);
    await quiet();
    // A sample makes its GetItem first, alone, then the wave, then a row's write with the wave beside it.
    expect(counter.calls[0]!.operation).toBe('GetItem');
    // Which of the row's write and the wave beside it reaches the store first is a race: split by operation, not order.
    const rowWrite = counter.calls.find((call) => call.operation === 'TransactWriteItems')!;
    const waves = counter.calls.slice(1).filter((call) => call !== rowWrite);
    const wave = waves.slice(0, waves.length / 2);
    const besideRowWrite = waves.slice(waves.length / 2);
    expect(samples.wave).toHaveLength(1);
    expect(samples.waveBesideRowWrite).toHaveLength(1);
    expect(kinds(besideRowWrite)).toEqual(kinds(wave));
    expect(Math.max(...wave.map((call) => call.endMs))).toBeLessThanOrEqual(rowWrite.startMs);
    expect(oneWave([rowWrite, ...besideRowWrite])).toBe(true);
    expect(beforeUpstream.length).toBeGreaterThan(0);
    expect(kinds(wave)).toEqual(kinds(beforeUpstream));
    expect(oneWave(beforeUpstream)).toBe(true);
    expect(oneWave(wave)).toBe(true);
    // The store's answers were held HOLD_MS each: the wave took one hold, not one per call.
    expect(samples.wave[0]).toBeGreaterThanOrEqual(HOLD_MS);
  } finally {
    yardstick.close();
  }
});
