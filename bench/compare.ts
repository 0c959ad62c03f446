/**
 * `npm run bench:compare -- <rerun.json> [<baseline.json>]`: is a rerun within the noise that
 * METHOD.md states for each figure? The baseline defaults to the committed bench/results.json.
 * Prints the table and writes it to bench/RERUN.md. Each band is the one METHOD.md names:
 * c=1 p50s within the baseline's per-round range widened by 20 % (this proxy's after the machine's
 * drift: how much the unchanged Portkey gateway's p50 of the same phase moved between the two runs),
 * CPU per request ±15 % after the machine's drift in Portkey's CPU (pinned: ±15 %, no drift), tails
 * and c=16 figures ±50 %, throughput ±45 % alone and ±15 % as a ratio to Portkey's in the same run
 * (pinned: ±25 % alone, ±35 % as the ratio), RSS ±10 %, and no crash ever.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sameRunRatio } from './ramp';
import type { Results } from './results';

export interface Comparison {
  figure: string;
  baseline: number;
  rerun: number;
  /** The band the rerun must fall in, inclusive. */
  low: number;
  high: number;
  rule: string;
  within: boolean;
}

type Band = { low: number; high: number; rule: string };

const relativeBand = (baseline: number, share: number): Band => ({
  low: baseline * (1 - share),
  high: baseline * (1 + share),
  rule: `±${Math.round(share * 100)} %`,
});

const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? a / b : undefined);

/**
 * A c=1 p50: the spread of the baseline's own rounds, widened by 20 % (quiet machine), scaled by
 * the machine's drift when one is given. Latency at c=1 follows the machine's speed at the time:
 * two runs of one commit a quarter of an hour apart measured every contender of the phase, the
 * unchanged Portkey gateway included, about a third faster in one than in the other (METHOD.md).
 */
const roundBand = (rounds: number[] | undefined, baseline: number, drift?: number): Band => {
  const scale = drift ?? 1;
  const after = drift === undefined ? '' : ` after the machine's drift (×${drift.toFixed(2)})`;
  return rounds && rounds.length > 0
    ? { low: Math.min(...rounds) * 0.8 * scale, high: Math.max(...rounds) * 1.2 * scale, rule: `round range ±20 %${after}` }
    : { ...relativeBand(baseline * scale, 0.2), rule: `±20 %${after}` };
};

type Figure = { name: string; read: (r: Results) => number | undefined; band: (baseline: Results, rerun: Results) => Band };
type C1Phase = 'c1Paced' | 'c1';
type C1Contender = 'stored' | 'passThrough' | 'portkey';

/** The unchanged Portkey gateway's p50 in a c=1 phase: how fast the machine was during it. */
const portkeyP50 = (phase: C1Phase) => (r: Results) => r.latency[phase].portkey?.p50;

/** This proxy's c=1 p50s are judged after the drift of Portkey's; Portkey's own p50 keeps the plain band. */
const p50AtC1 = (phase: C1Phase, id: C1Contender, label: string): Figure => ({
  name: `p50 c=1 ${phase === 'c1Paced' ? 'alone' : 'back to back'}, ${label} (ms)`,
  read: (r) => r.latency[phase][id]?.p50,
  band: (b, r) =>
    roundBand(b.latency[phase][id]?.roundP50s, b.latency[phase][id]?.p50 ?? NaN, id === 'portkey' ? undefined : ratio(portkeyP50(phase)(r), portkeyP50(phase)(b))),
});

const withinShare = (name: string, share: number, read: (r: Results) => number | undefined): Figure => ({
  name,
  read,
  band: (b) => relativeBand(read(b) ?? NaN, share),
});

/**
 * The unchanged Portkey gateway's figures that tell how fast the machine was at the time, each the
 * yardstick of the same figure of this proxy. Not its pinned CPU at max: there Portkey saturates its
 * own CPU, and its CPU per request follows the throughput it reached (0.42–0.57 ms in four runs)
 * rather than the machine (METHOD.md).
 */
const DRIFT_YARDSTICKS = {
  'CPU per request c=1 paced': (r: Results) => r.resources.c1Paced.portkey?.cpuMsPerRequest,
  'CPU per request c=16': (r: Results) => r.resources.c16.portkey?.cpuMsPerRequest,
  'p50 c=1 alone': portkeyP50('c1Paced'),
  'p50 c=1 back to back': portkeyP50('c1'),
};

/**
 * CPU per request, ±15 % around the baseline scaled by the machine's drift between the two runs:
 * the factor by which the same figure of the unchanged Portkey gateway moved. CPU time per request
 * follows the machine's speed at the time (frequency, cache and memory contention from other
 * work), which moved an unchanged program's figure by 26 % between two runs of one afternoon.
 */
const cpuAfterDrift = (name: string, read: (r: Results) => number | undefined, reference: (r: Results) => number | undefined): Figure => ({
  name,
  read,
  band: (b, r) => {
    const drift = ratio(reference(r), reference(b));
    const centre = (read(b) ?? NaN) * (drift ?? 1);
    return { low: centre * 0.85, high: centre * 1.15, rule: drift === undefined ? '±15 %' : `±15 % after the machine's drift (×${drift.toFixed(2)})` };
  },
});

export const FIGURES: Figure[] = [
  p50AtC1('c1Paced', 'stored', 'stored key'),
  p50AtC1('c1Paced', 'passThrough', 'pass-through'),
  p50AtC1('c1Paced', 'portkey', 'Portkey'),
  p50AtC1('c1', 'stored', 'stored key'),
  p50AtC1('c1', 'portkey', 'Portkey'),
  cpuAfterDrift('CPU per request c=1 paced, stored key (ms)', (r) => r.resources.c1Paced.stored?.cpuMsPerRequest, DRIFT_YARDSTICKS['CPU per request c=1 paced']),
  cpuAfterDrift('CPU per request c=16, stored key (ms)', (r) => r.resources.c16.stored?.cpuMsPerRequest, DRIFT_YARDSTICKS['CPU per request c=16']),
  withinShare('p99 c=16, stored key (ms)', 0.5, (r) => r.latency.c16.stored?.p99),
  withinShare('p99 c=16, Portkey (ms)', 0.5, (r) => r.latency.c16.portkey?.p99),
  withinShare('stream event lag p99 c=1, stored key (ms)', 0.5, (r) => r.streaming.c1.stored?.eventLag?.p99),
  withinShare('stream event lag p99 c=16, stored key (ms)', 0.5, (r) => r.streaming.c16.stored?.eventLag?.p99),
  withinShare('throughput, stored key (req/s)', 0.45, (r) => r.throughput.stored?.maxRps),
  withinShare('throughput, Portkey (req/s)', 0.45, (r) => r.throughput.portkey?.maxRps),
  withinShare('throughput, stored key / Portkey (same run)', 0.15, (r) => sameRunRatio(r.throughput.stored, r.throughput.portkey)),
  withinShare('RSS max c=16, stored key (MB)', 0.1, (r) => r.resources.c16.stored?.rssMaxMb),
  // The pinned phase (absent from runs before it, so then not compared): the same bands as its shared-core figures.
  withinShare('pinned p99 c=16, stored key (ms)', 0.5, (r) => r.pinned?.contenders.stored?.c16.p99),
  // Pinned, the proxy's limit is DynamoDB Local's core, Portkey's its own saturated one, whose
  // throughput moved ×1.31 between two runs of one commit: hence the proxy's own figure beside a
  // wider ratio (METHOD.md).
  withinShare('pinned throughput, stored key (req/s)', 0.25, (r) => r.pinned?.contenders.stored?.throughput.maxRps),
  withinShare('pinned throughput, stored key / Portkey (same run)', 0.35, (r) => sameRunRatio(r.pinned?.contenders.stored?.throughput, r.pinned?.contenders.portkey?.throughput)),
  // Pinned, the proxy has a CPU to itself: the outside load the drift corrects for does not reach it.
  withinShare('pinned CPU per request at max, stored key (ms)', 0.15, (r) => r.pinned?.contenders.stored?.cpuMsPerRequestAtMax),
];

export function compareRuns(baseline: Results, rerun: Results): Comparison[] {
  const rows: Comparison[] = [];
  for (const figure of FIGURES) {
    const before = figure.read(baseline);
    const after = figure.read(rerun);
    if (before === undefined || after === undefined || !Number.isFinite(before) || !Number.isFinite(after)) continue;
    const { low, high, rule } = figure.band(baseline, rerun);
    rows.push({ figure: figure.name, baseline: before, rerun: after, low, high, rule, within: after >= low && after <= high });
  }
  const crashes = (r: Results) => r.disconnects.reduce((sum, d) => sum + d.crashes, 0);
  const crashed = crashes(rerun);
  rows.push({ figure: 'crashes with leaving clients', baseline: crashes(baseline), rerun: crashed, low: 0, high: 0, rule: 'none, ever', within: crashed === 0 });
  return rows;
}

const f = (value: number) => (Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2));

function driftLine(baseline: Results, rerun: Results): string {
  const parts = Object.entries(DRIFT_YARDSTICKS).flatMap(([label, read]) => {
    const [before, after] = [read(baseline), read(rerun)];
    return before && after ? [`${label} ${f(before)} → ${f(after)} ms (×${(after / before).toFixed(2)})`] : [];
  });
  return parts.length ? parts.join(', ') : 'not measured in both runs';
}

export function renderComparison(rows: Comparison[], baseline: { label: string; results: Results }, rerun: { label: string; results: Results }): string {
  const within = rows.filter((row) => row.within).length;
  const describe = (r: Results) => `commit ${r.source.commit.slice(0, 7)}${r.source.clean ? '' : ' (uncommitted changes)'}, ${r.date}, 1-minute load ${r.loadAverage.start} at the start`;
  return [
    '# A rerun against the committed run',
    '',
    'Generated by `npm run bench:compare`; the bands are the noise bench/METHOD.md states for each figure.',
    '',
    `- Baseline: ${baseline.label}: ${describe(baseline.results)}.`,
    `- Rerun: ${rerun.label}: ${describe(rerun.results)}.`,
    `- **${within} of ${rows.length} figures within their band.**`,
    `- The machine's drift, from the unchanged Portkey gateway's figures (its CPU is not judged: it is the yardstick): ${driftLine(baseline.results, rerun.results)}.`,
    '',
    '| figure | baseline | rerun | rerun / baseline | band | within |',
    '|---|---:|---:|---:|---|:---:|',
    ...rows.map(
      (row) =>
        `| ${row.figure} | ${f(row.baseline)} | ${f(row.rerun)} | ${row.baseline ? (row.rerun / row.baseline).toFixed(2) : '–'} | ${row.rule}: ${f(row.low)}–${f(row.high)} | ${row.within ? 'yes' : '**no**'} |`,
    ),
    '',
  ].join('\n');
}

function main(): void {
  const [rerunPath, baselinePath = join('bench', 'results.json')] = process.argv.slice(2);
  if (!rerunPath) {
    process.stderr.write('usage: npm run bench:compare -- <rerun.json> [<baseline.json>]\n');
    process.exit(2);
  }
  const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Results;
  const baseline = { label: relative(process.cwd(), baselinePath), results: read(baselinePath) };
  const rerun = { label: relative(process.cwd(), rerunPath), results: read(rerunPath) };
  const text = renderComparison(compareRuns(baseline.results, rerun.results), baseline, rerun);
  writeFileSync(join('bench', 'RERUN.md'), text);
  process.stdout.write(text);
}

if (process.argv[1] && /compare\.ts$/.test(process.argv[1])) main();
