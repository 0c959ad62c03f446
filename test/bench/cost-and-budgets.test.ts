/**
 * The cost model prices what the run measured (the writes after the answer, the billed write
 * units, the stream consumer at a stated traffic from the stack's own mapping), and the issue's
 * targets each have a budget whose reason, when missed, names the design that would meet it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { judgeBudgets } from '../../bench/budgets';
import { repriceCost } from '../../bench/cost-inputs';
import { containerCost, costPerMillion, FULL_VCPU_MB, MONTHLY_REQUESTS, rowsPerBatchAt, streamConsumerUsdPerMillion, type CostInputs } from '../../bench/cost-model';
import { renderFindings } from '../../bench/findings';
import { finishResults, type Measured } from '../../bench/outputs';
import type { Results } from '../../bench/results';
import { STREAM_MAPPING } from '../../lib/constructs/stats-consumer';

const ROOT = join(__dirname, '..', '..');
const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as Results;
const { budgets: _budgets, headline: _headline, ...measured } = results;
const copy = (): Measured => JSON.parse(JSON.stringify(measured)) as Measured;
const again = () => JSON.parse(JSON.stringify(measured)) as typeof measured;
const budget = (r: { budgets: Results['budgets'] }, name: string) => r.budgets.find((b) => b.name === name);

const inputs: CostInputs = { upstreamSeconds: 3, proxyOverheadMs: 4, tailAfterResponseMs: 30, writeUnitsPerRequest: 5, readUnitsPerRequest: 4, responseBytes: 600, coldStartsPerMillion: 0, coldStartInitMs: 0 };

test("the stream consumer is priced at 1 million requests a month from the mapping's batching window, its worst case beside it", () => {
  const rows = rowsPerBatchAt(MONTHLY_REQUESTS);
  expect(rows).toBeCloseTo((MONTHLY_REQUESTS / (30 * 86_400)) * STREAM_MAPPING.maxBatchingWindow.toSeconds(), 9);
  expect(rowsPerBatchAt(1e12)).toBe(STREAM_MAPPING.batchSize);
  const model = costPerMillion(inputs, 256);
  const line = model.lines.find((l) => l.item.startsWith('Stream consumer'))!;
  // The same cost per batch, shared by the rows of a batch.
  expect(line.usdPerMillion).toBeCloseTo(streamConsumerUsdPerMillion(1) / rows, 9);
  expect(model.streamConsumer).toEqual({ monthlyRequests: MONTHLY_REQUESTS, rowsPerBatch: rows, usdPerMillion: line.usdPerMillion, worstCaseUsdPerMillion: streamConsumerUsdPerMillion(1) });
  expect(line.basis).toContain(`$${streamConsumerUsdPerMillion(1).toFixed(2)}`);
});

test('the billed duration holds the measured writes after the answer, and billed write units replace the reported ones when counted', () => {
  const reported = costPerMillion(inputs, 256);
  expect(reported.billedMsPerRequest).toBeCloseTo(3000 + 4 + 30, 9);
  expect(reported.lines.find((l) => l.item.startsWith('Lambda duration'))!.basis).toContain('30.0 ms of store writes after the answer (measured');
  const writes = (m: ReturnType<typeof costPerMillion>) => m.lines.find((l) => l.item === 'DynamoDB writes')!;
  expect(writes(reported).basis).toContain('billed units were not counted in this run');
  const billed = costPerMillion({ ...inputs, billedWriteUnitsPerRequest: 7, transactionItemsPerRequest: 3 }, 256);
  expect(writes(billed).usdPerMillion).toBeCloseTo((7 / 5) * writes(reported).usdPerMillion, 9);
  expect(writes(billed).basis).toContain('names 3 items per request');
  expect(billed.totalUsdPerMillion - reported.totalUsdPerMillion).toBeCloseTo(writes(billed).usdPerMillion - writes(reported).usdPerMillion, 9);
});

test('the committed cost is what the model makes of the run (re-priced on render)', () => {
  expect(JSON.parse(JSON.stringify(repriceCost(results)))).toEqual(results.cost);
});

test("every target of the issue that the run measures has a budget in the committed run", () => {
  for (const name of [
    'Store calls per stored-key JSON request (steady state, no requester budget)',
    'Store calls per pass-through JSON request (steady state, no requester budget)',
    'Store round trips before the upstream call',
    'CPU per stored-key request, c=16',
    'CPU per stored-key request, c=16, against the bare pipe',
    'CPU per stored-key request, c=1 paced (as a Lambda instance serves), against the bare pipe',
    'Infrastructure per million requests, 3 s upstream',
  ])
    expect(budget(results, name)).toBeDefined();
  const findings = renderFindings(results);
  for (const b of results.budgets.filter((b) => !b.met)) expect(findings).toContain(b.why.slice(1, 60));
});

test('store calls: one before forwarding and one after is met; a second call before forwarding misses and points to the one-call design', () => {
  const r = copy();
  const stored = r.roundTrips.find((t) => t.mode === 'stored key')!;
  Object.assign(stored, { callsBeforeUpstream: 1, callsDuringResponse: 0, callsAfterResponse: 1 });
  expect(budget({ budgets: judgeBudgets(r) }, 'Store calls per stored-key JSON request (steady state, no requester budget)')?.met).toBe(true);
  Object.assign(stored, { callsBeforeUpstream: 2 });
  const missed = budget({ budgets: judgeBudgets(r) }, 'Store calls per stored-key JSON request (steady state, no requester budget)')!;
  expect(missed.met).toBe(false);
  expect(missed.measured).toBe('3 (2 before, 1 after)');
  expect(missed.why).toContain('"Store calls before forwarding"');
});

test("CPU against the bare pipe: within 2× is met; a miss adds up the pipe, the calls and the proxy's own work, and says what would meet it", () => {
  const r = copy();
  const c16 = r.resources.c16;
  c16.pipe!.cpuMsPerRequest = 0.3;
  c16.stored!.cpuMsPerRequest = 0.59;
  // Fixed here so the proxy's own work (1.8 − 0.3 − 3 × 0.413) leaves room for shared calls, whatever the committed run measured.
  r.storeCallCpuMs.proxyClient = 0.413;
  Object.assign(r.roundTrips.find((t) => t.mode === 'stored key')!, { callsBeforeUpstream: 2, callsDuringResponse: 0, callsAfterResponse: 1 });
  const name = 'CPU per stored-key request, c=16, against the bare pipe';
  expect(budget({ budgets: judgeBudgets(r) }, name)?.met).toBe(true);
  c16.stored!.cpuMsPerRequest = 1.8;
  const missed = budget({ budgets: judgeBudgets(r) }, name)!;
  expect(missed.met).toBe(false);
  const perCall = r.storeCallCpuMs.proxyClient;
  const stored = r.roundTrips.find((t) => t.mode === 'stored key')!;
  const calls = stored.callsBeforeUpstream + stored.callsDuringResponse + stored.callsAfterResponse;
  const rest = 1.8 - 0.3 - calls * perCall;
  expect(missed.why).toContain(`1.800 ms = bare pipe 0.300 + ${calls} store calls × ${perCall.toFixed(3)} ms`);
  expect(missed.why).toContain(`${rest.toFixed(3)} ms of the proxy's own work`);
  expect(missed.why).toMatch(/calls shared between concurrent requests/);
});

test('a cost miss gives the total at 128 MB and what a design billed by the hour, not per waiting request, would cost', () => {
  const r = finishResults(again());
  const row = budget(r, 'Infrastructure per million requests, 3 s upstream')!;
  expect(row.met).toBe(r.cost.totalUsdPerMillion <= 10);
  if (row.met) return;
  const at128 = r.cost.byMemory.find((m) => m.memoryMb === 128)!.totalUsdPerMillion;
  expect(row.why).toContain(`at 128 MB the total is $${at128.toFixed(2)}`);
  expect(row.why).toContain(`the wait alone $${((128 / 1024) * 3 * 1e6 * 0.0000133334).toFixed(2)}`);
  const box = containerCost(r.cost, r.resources.c16.stored!.cpuMsPerRequest, 10);
  expect(row.why).toContain(`$${box.fixedUsdPerMonth.toFixed(2)} a month`);
  expect(row.why).toContain(`from ${(box.monthlyRequestsForTarget / 1e6).toFixed(1)} million requests a month`);
  // At that traffic the container design's total is the target.
  expect((box.fixedUsdPerMonth * 1e6) / box.monthlyRequestsForTarget + box.storeUsdPerMillion + box.cpuUsdPerMillion).toBeCloseTo(10, 6);
  expect(FULL_VCPU_MB).toBe(1769);
});

test("back to back: a miss names what the store alone shows, the wave beside a row's write against the wave alone", () => {
  const r = copy();
  r.yardstick.c1.waveBesideRowWrite = { ...r.yardstick.c1.wave, p50: r.yardstick.c1.wave.p50 + 3 };
  const stored = r.latency.c1.stored!;
  stored.p50 = r.latency.c1.direct!.p50 + r.yardstick.c1.wave.p50 + 8;
  const missed = budget({ budgets: judgeBudgets(r) }, 'Added p50, c=1 back to back, stored key')!;
  expect(missed.met).toBe(false);
  expect(missed.why).toContain(`DynamoDB Local answers the wave in ${r.yardstick.c1.wave.p50.toFixed(2)} ms, and in ${(r.yardstick.c1.wave.p50 + 3).toFixed(2)} ms when a row's write was started just before`);
});


test("alone: a miss splits what any Node relay adds (the bare pipe, same rounds) from the proxy's own work, and says what would meet it", () => {
  const r = copy();
  const paced = r.latency.c1Paced;
  const wave = r.yardstick.c1Paced.wave.p50;
  paced.pipe = { ...paced.pipe!, p50: paced.direct!.p50 + 0.4 };
  paced.stored = { ...paced.stored!, p50: paced.direct!.p50 + wave + 1.5 };
  const missed = budget({ budgets: judgeBudgets(r) }, 'Added p50, c=1 alone (20 ms apart), stored key')!;
  expect(missed.met).toBe(false);
  expect(missed.why).toContain('The bare pipe alone adds 0.40 ms over the direct call in the same rounds, so 1.10 ms is');
  expect(missed.why).toContain('that own work cut to 0.60 ms');
  // A relay that alone spends the whole millisecond leaves nothing for any design on this machine.
  paced.pipe = { ...paced.pipe, p50: paced.direct!.p50 + 1.2 };
  expect(budget({ budgets: judgeBudgets(r) }, 'Added p50, c=1 alone (20 ms apart), stored key')!.why).toContain('no Node proxy that forwards over HTTP meets it');
});

test('RSS: a miss names Node alone, the heap beyond it, and the flag that trades memory for CPU', () => {
  const r = copy();
  r.resources.c16.stored!.rssMaxMb = 120;
  const missed = budget({ budgets: judgeBudgets(r) }, 'Local server RSS under load (c=16)')!;
  expect(missed.met).toBe(false);
  expect(missed.why).toContain(`Node alone (the bare pipe, same load) holds ${r.resources.c16.pipe!.rssMaxMb!.toFixed(0)} MB`);
  expect(missed.why).toContain('--max-semi-space-size=2');
  r.resources.c16.stored!.rssMaxMb = 80;
  for (const mode of ['passThrough', 'cacheHit'] as const) if (r.resources.c16[mode]) r.resources.c16[mode]!.rssMaxMb = 80;
  expect(budget({ budgets: judgeBudgets(r) }, 'Local server RSS under load (c=16)')!.met).toBe(true);
});
