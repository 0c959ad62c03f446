/**
 * Store round trips per request, by when they happen: before the upstream call
 * (on the critical path), while the answer streams, or after the client has the
 * whole answer (background writes). Requests go one at a time and the store is
 * let go quiet between them, so every call belongs to exactly one request.
 */
import type { RequestSpec } from './load-protocol';
import { monotonicMs, type BenchUpstream } from './fake-upstream';
import type { StoreCall, StoreCounter } from './store-counter';

export interface RoundTripSummary {
  mode: string;
  requests: number;
  /** Calls started before the upstream saw the request (before the answer, for cache hits). */
  callsBeforeUpstream: number;
  /** Sequential waves among those calls: calls started together count once. */
  wavesBeforeUpstream: number;
  callsDuringResponse: number;
  callsAfterResponse: number;
  /** Request start to the upstream receiving it (to the answer, for cache hits), less the counter's hold-back per wave. */
  msBeforeUpstream: number;
  /** Upstream receiving the request to the client having the whole answer. */
  msUpstreamToAnswer: number;
  /** Sequential waves among the calls after the answer (row, then rollups). */
  wavesAfterResponse: number;
  readUnits: number;
  /** As DynamoDB Local reported them. */
  writeUnits: number;
  /** As DynamoDB bills them, from the written items' sizes (billed-units.ts); absent in runs before it was counted. */
  billedWriteUnits?: number;
  /** Items named by the request's TransactWriteItems calls (its row and the counters it adds to). */
  transactionItems?: number;
  /**
   * How long store writes continue after the client has the answer (a Lambda
   * invocation stays billed meanwhile), less the counter's own hold-back.
   */
  tailAfterResponseMs: number;
  /** e.g. "UpdateItem rate-limits 1.00" — calls per request by operation and table. */
  operations: Record<string, number>;
}

/** Calls that overlap in time form one wave; a call that starts after the wave ended starts a new one. */
function waves(calls: readonly StoreCall[]): number {
  const sorted = [...calls].sort((a, b) => a.startMs - b.startMs);
  let count = 0;
  let waveEnd = -Infinity;
  for (const call of sorted) {
    if (call.startMs >= waveEnd) {
      count++;
      waveEnd = call.endMs;
    } else waveEnd = Math.max(waveEnd, call.endMs);
  }
  return count;
}

async function settle(counter: StoreCounter): Promise<void> {
  const deadline = monotonicMs() + 3_000;
  while (monotonicMs() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const last = counter.calls.reduce((latest, call) => Math.max(latest, call.endMs), 0);
    if (counter.inFlight() === 0 && monotonicMs() - last > 150) return;
  }
}

export async function countRoundTrips(options: {
  mode: string;
  spec: (index: number) => RequestSpec;
  counter: StoreCounter;
  upstream: BenchUpstream;
  warmup: number;
  requests: number;
  tablePrefix: (table: string) => string;
  /** The hold-back the counter adds to every store answer. */
  counterDelayMs: number;
}): Promise<RoundTripSummary> {
  const { counter, upstream } = options;
  const total: RoundTripSummary = {
    mode: options.mode,
    requests: 0,
    callsBeforeUpstream: 0,
    wavesBeforeUpstream: 0,
    callsDuringResponse: 0,
    callsAfterResponse: 0,
    msBeforeUpstream: 0,
    msUpstreamToAnswer: 0,
    wavesAfterResponse: 0,
    readUnits: 0,
    writeUnits: 0,
    billedWriteUnits: 0,
    transactionItems: 0,
    tailAfterResponseMs: 0,
    operations: {},
  };
  for (let i = 0; i < options.warmup + options.requests; i++) {
    const spec = options.spec(i);
    await settle(counter);
    counter.reset();
    upstream.startRecording();
    const started = monotonicMs();
    const response = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
    await response.arrayBuffer();
    const ended = monotonicMs();
    if (response.status !== 200) throw new Error(`${options.mode}: HTTP ${response.status}`);
    await settle(counter);
    const arrival = upstream.arrivals[0] ?? ended;
    upstream.stopRecording();
    if (i < options.warmup) continue;

    const calls = counter.calls.filter((call) => call.startMs >= started);
    const before = calls.filter((call) => call.startMs < arrival);
    const during = calls.filter((call) => call.startMs >= arrival && call.startMs <= ended);
    const after = calls.filter((call) => call.startMs > ended);
    total.requests++;
    total.callsBeforeUpstream += before.length;
    const beforeWaves = waves(before);
    total.wavesBeforeUpstream += beforeWaves;
    total.msBeforeUpstream += arrival - started - beforeWaves * options.counterDelayMs;
    total.msUpstreamToAnswer += ended - arrival;
    total.callsDuringResponse += during.length;
    total.callsAfterResponse += after.length;
    const afterWaves = waves(after);
    total.wavesAfterResponse += afterWaves;
    total.tailAfterResponseMs += Math.max(0, Math.max(0, ...after.map((call) => call.endMs - ended)) - afterWaves * options.counterDelayMs);
    for (const call of calls) {
      if (call.kind === 'read') total.readUnits += call.units;
      if (call.kind === 'write') {
        total.writeUnits += call.units;
        total.billedWriteUnits! += call.billedUnits ?? call.units;
        total.transactionItems! += call.transactionItems ?? 0;
      }
      const key = `${call.operation} ${options.tablePrefix(call.table)}`;
      total.operations[key] = (total.operations[key] ?? 0) + 1;
    }
  }
  const n = Math.max(1, total.requests);
  const perRequest = (value: number) => Number((value / n).toFixed(2));
  return {
    ...total,
    callsBeforeUpstream: perRequest(total.callsBeforeUpstream),
    wavesBeforeUpstream: perRequest(total.wavesBeforeUpstream),
    callsDuringResponse: perRequest(total.callsDuringResponse),
    callsAfterResponse: perRequest(total.callsAfterResponse),
    wavesAfterResponse: perRequest(total.wavesAfterResponse),
    msBeforeUpstream: perRequest(total.msBeforeUpstream),
    msUpstreamToAnswer: perRequest(total.msUpstreamToAnswer),
    readUnits: perRequest(total.readUnits),
    writeUnits: perRequest(total.writeUnits),
    billedWriteUnits: perRequest(total.billedWriteUnits!),
    transactionItems: perRequest(total.transactionItems!),
    tailAfterResponseMs: perRequest(total.tailAfterResponseMs),
    operations: Object.fromEntries(Object.entries(total.operations).map(([key, count]) => [key, perRequest(count)])),
  };
}
