/**
 * RESULTS.md from results.json: one table per phase, each figure as the median over rounds with
 * the lowest and highest round beside it, and ratios taken within each round before their median
 * is taken. It states what was measured, never why or whether it is good.
 * `tsx bench/report.ts [results.json]` rewrites the RESULTS.md beside the file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LABELS, type ContenderId, type PhaseId, type Results, type Round, type Slot } from './plan';
import { median } from './stats';

type Value = (slot: Slot, direct: Slot | undefined) => number | undefined;

interface Column {
  label: string;
  value: Value;
  digits: number;
}

const col = (label: string, value: Value, digits = 2): Column => ({ label, value, digits });
const added =
  (pick: (slot: Slot) => number | undefined): Value =>
  (slot, direct) => {
    const own = pick(slot);
    const base = direct && pick(direct);
    return own === undefined || base === undefined ? undefined : own - base;
  };

/**
 * A p99 is shown only from a slot of at least this many answers: from fewer it is one of the few
 * slowest answers, which says little (a slot of 120 has one answer above its p99).
 */
export const MIN_P99_SAMPLES = 400;
/** Only answers enough for a p99 give one; fewer give none rather than their slowest few. */
const p99Of = (slot: Slot, pick: (slot: Slot) => number) => (slot.answered >= MIN_P99_SAMPLES ? pick(slot) : undefined);

const P50 = col('p50 ms', (s) => s.p50);
const P90 = col('p90 ms', (s) => s.p90);
const P99 = col('p99 ms', (s) => p99Of(s, (slot) => slot.p99));
const ADDED_P50 = col(
  'added p50 ms',
  added((s) => s.p50),
);
const ADDED_P90 = col(
  'added p90 ms',
  added((s) => s.p90),
);
const ADDED_P99 = col(
  'added p99 ms',
  added((s) => p99Of(s, (slot) => slot.p99)),
);
const CPU = col('CPU ms/request', (s) => s.cpuMsPerRequest, 3);
const DYNAMO_CPU = col('DynamoDB Local CPU ms/request', (s) => s.dynamoCpuMsPerRequest, 3);
const ERRORS = col('errors', (s) => s.errors, 0);
const RPS = col('requests/s', (s) => s.rps, 0);
const FIRST_BYTE = col('first byte p50 ms', (s) => s.firstByteP50);
const ADDED_FIRST_BYTE = col(
  'added first byte p50 ms',
  added((s) => s.firstByteP50),
);
const ADDED_FIRST_BYTE_P99 = col(
  'added first byte p99 ms',
  added((s) => p99Of(s, (slot) => slot.firstByteP99)),
);
const LAG_P50 = col('event lag p50 ms', (s) => s.lagP50);
const LAG_P99 = col('event lag p99 ms', (s) => s.lagP99);
const GAP_P99 = col('event gap p99 ms', (s) => s.gapP99);
const GAP_MAX = col('event gap max ms', (s) => s.gapMax);

/** The columns of each phase's table, and those also given as ratios to Portkey and to the pipe. */
const TABLES: Record<PhaseId, { columns: Column[]; ratios: Column[] }> = {
  c1: { columns: [P50, P90, ADDED_P50, ADDED_P90, CPU, DYNAMO_CPU, ERRORS], ratios: [ADDED_P50, ADDED_P90, CPU] },
  c1quota: { columns: [P50, P90, ADDED_P50, ADDED_P90, CPU, DYNAMO_CPU, ERRORS], ratios: [] },
  c1quotaRested: { columns: [P50, P90, ADDED_P50, ADDED_P90, CPU, DYNAMO_CPU, ERRORS], ratios: [] },
  c1quotaSlice20: { columns: [P50, P90, ADDED_P50, ADDED_P90, CPU, DYNAMO_CPU, ERRORS], ratios: [] },
  c16: { columns: [P50, P99, ADDED_P50, ADDED_P99, RPS, CPU, DYNAMO_CPU, ERRORS], ratios: [ADDED_P50, ADDED_P99, CPU] },
  c64: { columns: [RPS, P50, P90, P99, CPU, DYNAMO_CPU, ERRORS], ratios: [RPS, CPU] },
  stream: {
    columns: [
      FIRST_BYTE,
      ADDED_FIRST_BYTE,
      ADDED_FIRST_BYTE_P99,
      LAG_P50,
      LAG_P99,
      GAP_P99,
      GAP_MAX,
      CPU,
      DYNAMO_CPU,
      ERRORS,
    ],
    ratios: [ADDED_FIRST_BYTE, LAG_P99, CPU],
  },
  cache: { columns: [P50, P90, CPU, DYNAMO_CPU, ERRORS], ratios: [] },
};

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** "median (min–max)" over rounds, or the one value when there is no spread. */
function spread(values: number[], digits: number, prefix = ''): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return '–';
  const low = Math.min(...finite);
  const high = Math.max(...finite);
  const mid = `${prefix}${fixed(median(finite), digits)}`;
  return low === high ? mid : `${mid} (${fixed(low, digits)}–${fixed(high, digits)})`;
}

const slotOf = (round: Round, phase: PhaseId, id: ContenderId) => round.phases[phase]?.[id];

function valuesOf(rounds: Round[], phase: PhaseId, id: ContenderId, column: Column): number[] {
  return rounds.map((round) => {
    const slot = slotOf(round, phase, id);
    return slot ? (column.value(slot, slotOf(round, phase, 'direct')) ?? Number.NaN) : Number.NaN;
  });
}

/**
 * The smallest divisor a ratio is taken over: below it (a pipe's added 0.8 ms, a CPU figure of one
 * or two clock ticks per slot) the ratio would magnify the divisor's own noise, not compare anything.
 */
export const MIN_DIVISOR = 2;

/** Per round, the contender's figure divided by the baseline's of the same round (none when the baseline is below `MIN_DIVISOR`). */
function ratiosOf(rounds: Round[], phase: PhaseId, id: ContenderId, baseline: ContenderId, column: Column): number[] {
  const own = valuesOf(rounds, phase, id, column);
  const base = valuesOf(rounds, phase, baseline, column);
  return own.map((value, i) => (base[i]! >= MIN_DIVISOR ? value / base[i]! : Number.NaN));
}

/** The ratios' median and range, and the rounds that gave none (their divisor was 0 or below), named rather than dropped. */
function ratioCell(rounds: Round[], phase: PhaseId, id: ContenderId, baseline: ContenderId, column: Column): string {
  const base = valuesOf(rounds, phase, baseline, column);
  const own = valuesOf(rounds, phase, id, column);
  const without = rounds.flatMap((round, i) =>
    Number.isFinite(base[i]!) && Number.isFinite(own[i]!) && !(base[i]! >= MIN_DIVISOR)
      ? [`round ${round.index} (divisor ${fixed(base[i]!, 2)})`]
      : [],
  );
  const cell = spread(ratiosOf(rounds, phase, id, baseline, column), 2, '×');
  return without.length ? `${cell}; no ratio in ${without.join(', ')}` : cell;
}

const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
const table = (head: string[], rows: string[][]) =>
  [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

function phaseSection(results: Results, phaseIndex: number): string {
  const phase = results.phases[phaseIndex]!;
  const { columns, ratios } = TABLES[phase.id];
  const ids = phase.contenders;
  const count = phase.durationS
    ? `${phase.durationS} s per contender per round`
    : `${phase.count} requests per contender per round`;
  const lines = [
    `## ${phase.title}`,
    '',
    `${count}, ${phase.concurrency} concurrent client${phase.concurrency > 1 ? 's' : ''}.`,
    '',
  ];
  lines.push(
    table(
      ['contender', ...columns.map((c) => c.label)],
      ids.map((id) => [LABELS[id], ...columns.map((c) => spread(valuesOf(results.rounds, phase.id, id, c), c.digits))]),
    ),
  );
  if (ratios.length && ids.includes('portkey') && ids.includes('pipe')) {
    const head = ['contender', ...ratios.flatMap((c) => [`${c.label} ÷ Portkey`, `${c.label} ÷ pipe`])];
    const rows = ids
      .filter((id) => id !== 'direct')
      .map((id) => [
        LABELS[id],
        ...ratios.flatMap((c) =>
          (['portkey', 'pipe'] as const).map((base) =>
            base === id ? '–' : ratioCell(results.rounds, phase.id, id, base, c),
          ),
        ),
      ]);
    lines.push(
      '',
      'Ratios taken within each round, then the median (and range) of those ratios:',
      '',
      table(head, rows),
    );
  }
  return lines.join('\n');
}

/** What the Lambda-share phases held the proxy to, or why they did not run. */
function lambdaShareNote(share: Results['lambdaShare']): string {
  if (share === undefined) return '';
  if ('unavailable' in share) return `The Lambda-share phases were not run: ${share.unavailable}.`;
  const quotas = Array.isArray(share) ? share : [share];
  const held = quotas.map((quota) => `${quota.quotaUs} µs of CPU per ${quota.periodUs} µs`).join(', or ');
  return `The Lambda-share phases held the proxy's process to ${held} (Lambda's share of a core at ${quotas[0]?.memoryMb} MB), DynamoDB Local and the provider stand-in outside the quota.`;
}

export function renderResults(results: Results): string {
  const { rounds } = results;
  const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(' / ');
  const roundRows = rounds.map((round) => [
    String(round.index),
    round.startedAt.slice(11, 19),
    load(round.loadStart),
    load(round.loadEnd),
    round.order.map((id) => LABELS[id]).join(' → '),
  ]);
  const processes = Object.keys(rounds[0]?.peakRssMb ?? {});
  const imports = rounds.flatMap((round) => round.coldImportMs);
  return [
    `# Benchmark results${results.quick ? ' (quick run: small counts, not for publication)' : ''}`,
    '',
    `Generated by \`npm run bench\` from [results.json](results.json); how each figure is taken: [METHOD.md](METHOD.md).`,
    '',
    `- commit \`${results.commit}\`, working tree ${results.clean ? 'clean' : 'NOT clean (uncommitted changes were measured)'}`,
    `- started ${results.startedAt}, took ${Math.round(results.durationS / 60)} min`,
    `- Node ${results.node}; ${results.machine.cores} × ${results.machine.cpu}, ${results.machine.memoryGb.toFixed(1)} GB, ${results.machine.os}`,
    ...(results.loadStart
      ? [
          `- load averages (1, 5, 15 min) at the run's start ${load(results.loadStart)}, at its end ${load(results.loadEnd ?? [])}, on ${results.machine.cores} cores`,
        ]
      : []),
    `- ${rounds.length} rounds; provider stand-in: first byte after ${results.upstream.firstByteMs} ms, streams of ${results.upstream.events} content events ${results.upstream.eventGapMs} ms apart`,
    '',
    'Every cell is the median over rounds, with the lowest and highest round in brackets. "Added" is a figure minus the direct call\'s in the same round and phase.',
    '',
    '## Rounds',
    '',
    'Load averages (1, 5, 15 minutes) of the machine at the start and end of each round, and the order the contenders took their turns in.',
    '',
    table(['round', 'start (UTC)', 'load at start', 'load at end', 'order'], roundRows),
    '',
    ...results.phases.flatMap((_, index) => [phaseSection(results, index), '']),
    '## The store round trip',
    '',
    `One call at a time from the orchestrator to DynamoDB Local through the project's store client, measured once per round apart from every contender (${rounds[0]?.storeRoundTripMs?.calls ?? 0} calls of each a round). The token gate's \`UpdateItem\` is the one round trip a proxied request waits for before forwarding; its usage row is put after the answer has gone out.`,
    '',
    table(
      ['call', 'p50 ms: median over rounds (range)', 'p90 ms: median over rounds (range)'],
      (['gate', 'getItem'] as const).map((call) => [
        call === 'gate' ? "the token gate's `UpdateItem`" : '`GetItem` of a key not there',
        spread(
          rounds.map((r) => r.storeRoundTripMs?.[call]?.p50 ?? Number.NaN),
          2,
        ),
        spread(
          rounds.map((r) => r.storeRoundTripMs?.[call]?.p90 ?? Number.NaN),
          2,
        ),
      ]),
    ),
    '',
    lambdaShareNote(results.lambdaShare),
    '',
    `A p99 is given only from slots of at least ${MIN_P99_SAMPLES} answers, and a ratio only over a divisor of at least ${MIN_DIVISOR}.`,
    '',
    '## Peak resident memory',
    '',
    'Highest resident set size since the process started (VmHWM), read at the end of each round, MB.',
    '',
    table(
      ['process', 'median over rounds (range)', 'after the last round'],
      processes.map((name) => [
        name,
        spread(
          rounds.map((r) => r.peakRssMb[name]!),
          1,
        ),
        (rounds.at(-1)?.peakRssMb[name] ?? Number.NaN).toFixed(1),
      ]),
    ),
    '',
    '## Cold import of the Lambda bundle',
    '',
    `A fresh Node process importing \`dist/lambda/handler.mjs\` (${(results.lambdaBundleBytes / 1024).toFixed(0)} KB): ${imports.length} imports, ${rounds[0]?.coldImportMs.length ?? 0} per round.`,
    '',
    table(
      ['import ms: median over imports (range)', 'per-round medians'],
      [[spread(imports, 0), rounds.map((r) => fixed(median(r.coldImportMs), 0)).join(', ')]],
    ),
    '',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2] ?? join('bench', 'results.json');
  writeFileSync(join(dirname(file), 'RESULTS.md'), renderResults(JSON.parse(readFileSync(file, 'utf8')) as Results));
}
