/**
 * `npm run bench:compare` judges a rerun against the committed run with the noise bands that
 * bench/METHOD.md states; bench/RERUN.md, when committed, is that comparison for the committed
 * results.json and no other.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareRuns, renderComparison } from '../../bench/compare';
import type { Results } from '../../bench/results';
import { scaledRamp } from './scaled-ramp';

const ROOT = join(__dirname, '..', '..');
const committed = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as Results;
const copy = (): Results => JSON.parse(JSON.stringify(committed)) as Results;
const row = (rows: ReturnType<typeof compareRuns>, prefix: string) => rows.find((r) => r.figure.startsWith(prefix))!;

test('the same run compared with itself is within every band', () => {
  const rows = compareRuns(committed, committed);
  expect(rows.length).toBeGreaterThanOrEqual(10);
  expect(rows.filter((r) => !r.within)).toEqual([]);
});

test('CPU per request 30 % higher is outside its ±15 % band; 10 % higher is inside', () => {
  const worse = copy();
  worse.resources.c1Paced.stored!.cpuMsPerRequest *= 1.3;
  expect(row(compareRuns(committed, worse), 'CPU per request c=1 paced, stored').within).toBe(false);
  const close = copy();
  close.resources.c1Paced.stored!.cpuMsPerRequest *= 1.1;
  expect(row(compareRuns(committed, close), 'CPU per request c=1 paced, stored').within).toBe(true);
});

test("the proxy's CPU is judged after the machine's drift: moving with the unchanged Portkey's is noise, moving alone is not", () => {
  const drifted = copy();
  drifted.resources.c16.portkey!.cpuMsPerRequest *= 1.26;
  drifted.resources.c16.stored!.cpuMsPerRequest *= 1.3;
  const judged = row(compareRuns(committed, drifted), 'CPU per request c=16, stored');
  expect(judged.within).toBe(true);
  expect(judged.rule).toBe("±15 % after the machine's drift (×1.26)");
  const alone = copy();
  alone.resources.c16.stored!.cpuMsPerRequest *= 1.3;
  expect(row(compareRuns(committed, alone), 'CPU per request c=16, stored').within).toBe(false);
  // The same drift the other way: the proxy moving up while the machine got faster is outside.
  const opposite = copy();
  opposite.resources.c16.portkey!.cpuMsPerRequest *= 0.8;
  opposite.resources.c16.stored!.cpuMsPerRequest *= 1.1;
  expect(row(compareRuns(committed, opposite), 'CPU per request c=16, stored').within).toBe(false);
  // Portkey's own CPU is the yardstick, shown beside the table, not a judged row.
  expect(compareRuns(committed, drifted).some((r) => /CPU.*Portkey/.test(r.figure))).toBe(false);
  const text = renderComparison(compareRuns(committed, drifted), { label: 'a', results: committed }, { label: 'b', results: drifted });
  expect(text).toMatch(/- The machine's drift, from the unchanged Portkey gateway's figures .*CPU per request c=16 [\d.]+ → [\d.]+ ms \(×1\.26\)/);
});

test('a c=1 p50 is judged against the spread of the baseline rounds, widened by 20 %', () => {
  const rounds = committed.latency.c1Paced.stored!.roundP50s;
  const inside = copy();
  inside.latency.c1Paced.stored!.p50 = Math.max(...rounds) * 1.15;
  expect(row(compareRuns(committed, inside), 'p50 c=1 alone, stored').within).toBe(true);
  const outside = copy();
  outside.latency.c1Paced.stored!.p50 = Math.max(...rounds) * 1.25;
  expect(row(compareRuns(committed, outside), 'p50 c=1 alone, stored').within).toBe(false);
});

test("this proxy's c=1 p50s are judged after the machine's drift in Portkey's p50 of the same phase; Portkey's own keeps the plain band", () => {
  const rounds = committed.latency.c1Paced.stored!.roundP50s;
  // The whole phase a third slower, Portkey's unchanged gateway with it: the machine, not the proxy.
  const slower = copy();
  slower.latency.c1Paced.portkey!.p50 *= 1.5;
  slower.latency.c1Paced.stored!.p50 = Math.max(...rounds) * 1.5;
  const judged = row(compareRuns(committed, slower), 'p50 c=1 alone, stored');
  expect(judged.within).toBe(true);
  expect(judged.rule).toBe("round range ±20 % after the machine's drift (×1.50)");
  // The proxy alone as much slower: outside.
  const alone = copy();
  alone.latency.c1Paced.stored!.p50 = Math.max(...rounds) * 1.5;
  expect(row(compareRuns(committed, alone), 'p50 c=1 alone, stored').within).toBe(false);
  // The machine faster while the proxy got slower: outside.
  const opposite = copy();
  opposite.latency.c1.portkey!.p50 *= 0.6;
  opposite.latency.c1.stored!.p50 = Math.max(...committed.latency.c1.stored!.roundP50s);
  expect(row(compareRuns(committed, opposite), 'p50 c=1 back to back, stored').within).toBe(false);
  // Portkey is not judged against itself.
  expect(row(compareRuns(committed, slower), 'p50 c=1 alone, Portkey').rule).toBe('round range ±20 %');
  const text = renderComparison(compareRuns(committed, slower), { label: 'a', results: committed }, { label: 'b', results: slower });
  expect(text).toMatch(/p50 c=1 alone [\d.]+ → [\d.]+ ms \(×1\.50\)/);
});

(committed.pinned ? describe : describe.skip)('pinned figures', () => {
  test("CPU per request at max is judged ±15 % without drift: Portkey's saturated figure moving does not move the band", () => {
    const atMax = (r: Results, id: 'stored' | 'portkey') => r.pinned!.contenders[id]!.cpuMsPerRequestAtMax!;
    const drifted = copy();
    drifted.pinned!.contenders.portkey!.cpuMsPerRequestAtMax = atMax(committed, 'portkey') * 0.75;
    drifted.pinned!.contenders.stored!.cpuMsPerRequestAtMax = atMax(committed, 'stored') * 1.1;
    const judged = row(compareRuns(committed, drifted), 'pinned CPU per request at max, stored');
    expect(judged.rule).toBe('±15 %');
    expect(judged.within).toBe(true);
    const worse = copy();
    worse.pinned!.contenders.stored!.cpuMsPerRequestAtMax = atMax(committed, 'stored') * 1.2;
    expect(row(compareRuns(committed, worse), 'pinned CPU per request at max, stored').within).toBe(false);
  });

  test("Portkey's saturated throughput moving by 30 % leaves the ratio within ±35 %; the proxy's own throughput has its own ±25 % row", () => {
    const portkeyFaster = copy();
    portkeyFaster.pinned!.contenders.portkey!.throughput = scaledRamp(portkeyFaster.pinned!.contenders.portkey!.throughput, 1.3);
    const rows = compareRuns(committed, portkeyFaster);
    expect(row(rows, 'pinned throughput, stored key / Portkey').within).toBe(true);
    expect(row(rows, 'pinned throughput, stored key (req/s)').within).toBe(true);
    const proxySlower = copy();
    proxySlower.pinned!.contenders.stored!.throughput = scaledRamp(proxySlower.pinned!.contenders.stored!.throughput, 0.7);
    const slowerRows = compareRuns(committed, proxySlower);
    expect(row(slowerRows, 'pinned throughput, stored key (req/s)').within).toBe(false);
    expect(row(slowerRows, 'pinned throughput, stored key / Portkey').within).toBe(true);
    const halved = copy();
    halved.pinned!.contenders.stored!.throughput = scaledRamp(halved.pinned!.contenders.stored!.throughput, 0.5);
    expect(row(compareRuns(committed, halved), 'pinned throughput, stored key / Portkey').within).toBe(false);
  });
});

test('a single crash with leaving clients is never noise', () => {
  const crashed = copy();
  crashed.disconnects[0]!.crashes = 1;
  expect(row(compareRuns(committed, crashed), 'crashes').within).toBe(false);
});

test('the rendered table counts what is within and marks what is not', () => {
  const worse = copy();
  worse.throughput.stored = scaledRamp(worse.throughput.stored!, 0.5);
  const rows = compareRuns(committed, worse);
  const text = renderComparison(rows, { label: 'a', results: committed }, { label: 'b', results: worse });
  // Half the throughput is outside the ±45 % band, and so is its ratio to Portkey's in the same run.
  expect(text).toContain(`**${rows.length - 2} of ${rows.length} figures within their band.**`);
  expect(text).toMatch(/\| throughput, stored key \(req\/s\) \|.*\| \*\*no\*\* \|/);
  expect(text).toMatch(/\| throughput, stored key \/ Portkey \(same run\) \|.*\| \*\*no\*\* \|/);
});

const rerunFile = join(ROOT, 'bench', 'RERUN.md');
(existsSync(rerunFile) ? test : test.skip)('bench/RERUN.md compares a rerun with the committed results.json, as the tool renders it', () => {
  const text = readFileSync(rerunFile, 'utf8');
  const baselineLine = text.split('\n').find((line) => line.startsWith('- Baseline:'))!;
  expect(baselineLine).toContain(`commit ${committed.source.commit.slice(0, 7)}`);
  expect(baselineLine).toContain(committed.date);
  const tally = /\*\*(\d+) of (\d+) figures within their band\.\*\*/.exec(text)!;
  const judged = text.split('\n').filter((line) => /\| (yes|\*\*no\*\*) \|$/.test(line));
  expect(judged).toHaveLength(Number(tally[2]));
  expect(judged.filter((line) => line.endsWith('| yes |'))).toHaveLength(Number(tally[1]));
});
