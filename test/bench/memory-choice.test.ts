/**
 * The default memory size and docs/deploy.md's cost table come from one measurement,
 * bench/memory.json (`npm run bench:memory`), and the committed benchmark run's store counts:
 * the test fails when the choice, the rendered MEMORY.md, the docs table or the stack's default
 * drift from what the model makes of those figures.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADDED_LATENCY_BUDGET_MS, chooseMemory, costTableRows, COST_TABLE_HEADER, renderMemoryChoice, RSS_HEADROOM, type InstanceFigures, type MemoryChoice } from '../../bench/memory-choice';
import { costPerMillion, MONTHLY_REQUESTS, rowsPerBatchAt, STREAM_CONSUMER, streamConsumerUsdPerMillion } from '../../bench/cost-model';
import { CONSUMER_MEMORY_MB } from '../../lib/constructs/stats-consumer';
import { DEFAULTS } from '../../lib/settings';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const measured = JSON.parse(read('bench/memory.json')) as { figures: InstanceFigures; choice: MemoryChoice };
const results = JSON.parse(read('bench/results.json')) as Parameters<typeof chooseMemory>[1];

test('the stored choice is what the model makes of the measured figures and the committed run', () => {
  expect(chooseMemory(measured.figures, results)).toEqual(measured.choice);
  expect(read('bench/MEMORY.md')).toBe(renderMemoryChoice(measured.figures, measured.choice));
});

test('the chosen size is the cheapest that holds a 6 MB request with headroom and keeps the added latency within budget', () => {
  const { sizes, chosenMb } = measured.choice;
  const chosen = sizes.find((size) => size.memoryMb === chosenMb)!;
  expect(measured.figures.peakRssLargeBodyMb).toBeLessThanOrEqual(chosenMb * RSS_HEADROOM);
  expect(chosen.addedBeforeAnswerMs).toBeLessThanOrEqual(ADDED_LATENCY_BUDGET_MS);
  for (const size of sizes.filter((s) => s.totalUsd < chosen.totalUsd)) expect(size.fitsMemory && size.withinLatency).toBe(false);
});

test('the stack deploys the chosen size by default, and the consumer at the size the cost model prices', () => {
  expect(DEFAULTS.memoryMb).toBe(measured.choice.chosenMb);
  expect(STREAM_CONSUMER.memoryMb).toBe(CONSUMER_MEMORY_MB);
});

test("docs/deploy.md's cost table is the measured one", () => {
  const docs = read('docs/deploy.md');
  const table = docs.slice(docs.indexOf('<!-- memory-table:start -->\n') + '<!-- memory-table:start -->\n'.length, docs.indexOf('\n<!-- memory-table:end -->'));
  expect(table).toBe([...COST_TABLE_HEADER, ...costTableRows(measured.choice)].join('\n'));
  // The traffic the consumer's column is priced at, as the page states it.
  const prose = docs.replace(/\s+/g, ' ');
  expect(prose).toContain(`(${(MONTHLY_REQUESTS / (30 * 86_400)).toFixed(2)} per second)`);
  expect(prose).toContain(`about ${Math.round(rowsPerBatchAt(MONTHLY_REQUESTS))} rows per batch`);
});

test('a CPU-bound instance is slowed by the inverse of its share and a size too small for the peak RSS is refused', () => {
  const figures: InstanceFigures = { invocations: 1, cpuBeforeAnswerMs: 2, cpuTotalMs: 4, wallBeforeAnswerMs: 5, wallTotalMs: 10, peakRssMb: 80, peakRssLargeBodyMb: 200 };
  const choice = chooseMemory(figures, { source: { commit: 'x' }, cost: { lines: [] } });
  const at512 = choice.sizes.find((s) => s.memoryMb === 512)!;
  expect(at512.addedBeforeAnswerMs).toBeCloseTo(5 + 2 * (1769 / 512 - 1), 1);
  expect(at512.billedMs).toBeCloseTo(3000 + 10 + 4 * (1769 / 512 - 1), 1);
  expect(choice.sizes.filter((s) => s.fitsMemory).map((s) => s.memoryMb)).toEqual([256, 512, 1024]);
  expect(choice.chosenMb).toBe(256);
});

test("the benchmark's cost model stretches the measured CPU by the size's share and counts the stream consumer", () => {
  const inputs = { upstreamSeconds: 3, proxyOverheadMs: 4, tailAfterResponseMs: 40, writeUnitsPerRequest: 2, readUnitsPerRequest: 2, responseBytes: 600, coldStartsPerMillion: 0, coldStartInitMs: 0 };
  const plain = costPerMillion(inputs, 256);
  const withCpu = costPerMillion({ ...inputs, cpuMsPerRequest: 3 }, 256);
  expect(withCpu.billedMsPerRequest - plain.billedMsPerRequest).toBeCloseTo(3 * (1769 / 256 - 1), 6);
  const consumer = withCpu.lines.find((line) => line.item.startsWith('Stream consumer'));
  expect(consumer?.usdPerMillion).toBeCloseTo(streamConsumerUsdPerMillion(rowsPerBatchAt(MONTHLY_REQUESTS)), 9);
  expect(consumer!.usdPerMillion).toBeLessThan(streamConsumerUsdPerMillion(1));
  const at128 = withCpu.byMemory.find((m) => m.memoryMb === 128)!.totalUsdPerMillion;
  const at512 = withCpu.byMemory.find((m) => m.memoryMb === 512)!.totalUsdPerMillion;
  expect(at128).toBeLessThan(withCpu.totalUsdPerMillion);
  expect(at512).toBeGreaterThan(withCpu.totalUsdPerMillion);
});
