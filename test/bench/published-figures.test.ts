/**
 * The benchmark's published figures come from one run: the committed bench/results.json.
 * The README's performance section, RESULTS.md and FINDINGS.md are what the renderers make of
 * that file, and the README quotes no number the file does not hold.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { figuresNotHeld } from '../../bench/figure-check';
import { renderFindings } from '../../bench/findings';
import { finishResults } from '../../bench/outputs';
import { renderReadmeSection, splitReadme } from '../../bench/readme';
import { renderResults } from '../../bench/report';
import type { Results } from '../../bench/results';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const results = JSON.parse(read('bench/results.json')) as Results;
const readme = read('README.md');

/** The whole "## Performance" section, generated part and any text around it. */
function performanceSection(text: string): string {
  const start = text.indexOf('\n## Performance\n');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

test('results.json records the commit it measured and whether the working tree was clean', () => {
  expect(results.source.commit).toMatch(/^[0-9a-f]{40}$/);
  expect(typeof results.source.clean).toBe('boolean');
  expect(results.source.clean).toBe(results.source.changed.length === 0);
  expect(typeof results.quick).toBe('boolean');
});

test('results.json holds every figure the benchmark promises', () => {
  for (const phase of ['cold', 'c1', 'c1Paced'] as const) {
    expect(results.yardstick[phase].getItem.n).toBeGreaterThan(0);
    expect(results.yardstick[phase].wave.n).toBeGreaterThan(0);
  }
  for (const level of ['c1Paced', 'c16'] as const) {
    for (const id of ['stored', 'portkey', 'pipe', 'dynamoDbLocal'] as const) expect(results.resources[level][id]?.cpuMsPerRequest).toEqual(expect.any(Number));
  }
  for (const level of ['c1', 'c16'] as const) {
    expect(results.streaming[level].stored?.eventLag?.n).toBeGreaterThan(0);
    expect(results.streaming[level].storedResponses?.eventLag?.n).toBeGreaterThan(0);
  }
  expect(results.disconnects.map((d) => d.id)).toEqual(['stored', 'pipe', 'portkey']);
  const budget = (name: string) => results.budgets.find((b) => b.name.startsWith(name));
  expect(budget('CPU per stored-key request, c=1 paced')?.target).toBe('≤ 1.0 ms');
  expect(budget('CPU per stored-key request, c=16')).toBeDefined();
  expect(budget('Clients leaving mid-request: this proxy')).toBeDefined();
});

/** Whether the measured commit holds `path` (undefined when this checkout does not have the commit). */
function measuredCommitHas(path: string): boolean | undefined {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT }).status === 0;
  if (!git('cat-file', '-e', `${results.source.commit}^{commit}`)) return undefined;
  return git('cat-file', '-e', `${results.source.commit}:${path}`);
}

test('a run of code that has the pinned phase holds it: its figures, or the reason it was skipped', () => {
  const hasPhase = measuredCommitHas('bench/pinned.ts');
  // A checkout without the measured commit cannot tell; runs from before the phase render as "not measured".
  if (hasPhase === undefined) return;
  if (!hasPhase) return expect(results.pinned).toBeUndefined();
  const pinned = results.pinned!;
  expect(pinned).toBeDefined();
  if (pinned.skipped) return expect(pinned.skipped).toMatch(/\S/);
  for (const id of ['direct', 'pipe', 'stored', 'passThrough', 'portkey'] as const) {
    expect(pinned.contenders[id]?.c16.n).toBeGreaterThan(0);
    expect(pinned.contenders[id]?.throughput.maxRps).toBeGreaterThan(0);
  }
  expect(results.budgets.find((b) => b.name.startsWith("Throughput at 0 errors ≥ Portkey's"))).toBeDefined();
});

test('the measured requests are priced, so their rows take the same write path as real traffic', () => {
  const stored = results.roundTrips.find((r) => r.mode === 'stored key')!;
  expect(Object.keys(stored.operations).filter((operation) => operation.startsWith('TransactWriteItems '))).toHaveLength(1);
});

test("results.json's budgets and headline are what its measurements give (not edited by hand)", () => {
  const { budgets, headline, ...measured } = results;
  // Compared as JSON, the form they are stored in (a missing figure, NaN, is stored as null).
  const again = JSON.parse(JSON.stringify(finishResults(measured))) as Results;
  expect(budgets).toEqual(again.budgets);
  expect(headline).toEqual(again.headline);
});

test("the README's performance section is the one rendered from results.json", () => {
  expect(splitReadme(readme).section).toBe(renderReadmeSection(results));
  expect(performanceSection(readme)).toContain(`commit ${results.source.commit.slice(0, 7)}`);
});

test('every number the README quotes about performance is held by results.json', () => {
  expect(figuresNotHeld(performanceSection(readme), results)).toEqual([]);
});

test('a figure results.json does not hold is caught', () => {
  const section = performanceSection(readme);
  const quoted = /\d+\.\d\d/.exec(section.replace(/<!--[\s\S]*?-->/g, ''))![0];
  // Shift the figure until it matches nothing in the file, as a hand edit or a stale number would.
  let wrong = Number(quoted);
  do wrong += 0.01;
  while (figuresNotHeld(wrong.toFixed(2), results).length === 0);
  expect(figuresNotHeld(section.replace(quoted, wrong.toFixed(2)), results)).toEqual([wrong.toFixed(2)]);
  expect(figuresNotHeld('1234567.89 ms', results)).toEqual(['1234567.89']);
});

test('RESULTS.md and FINDINGS.md are rendered from the same results.json', () => {
  expect(read('bench/RESULTS.md')).toBe(renderResults(results));
  expect(read('bench/FINDINGS.md')).toBe(renderFindings(results));
  expect(read('bench/RESULTS.md')).toContain(`commit ${results.source.commit}`);
  expect(read('bench/FINDINGS.md')).toContain(`commit ${results.headline.commit}`);
});

describe('the Responses API stream phase in the published figures', () => {
  const { budgets: _budgets, headline: _headline, ...measured } = results;
  const streamBudget = (r: Results) => r.budgets.filter((b) => b.name.startsWith('Responses API stream adds no buffering'));

  /** The committed measurements with the Responses stream phase added, its lag `factor` × the chat stream's. */
  function withResponsesPhase(factor: number): Results {
    const copy = JSON.parse(JSON.stringify(measured)) as typeof measured;
    for (const level of ['c1', 'c16'] as const) {
      const chat = copy.streaming[level].stored!;
      const direct = copy.streaming[level].direct!;
      const scaled = { ...chat.eventLag!, p50: chat.eventLag!.p50 * factor, p99: chat.eventLag!.p99 * factor };
      copy.streaming[level].storedResponses = { ...chat, eventLag: scaled };
      copy.streaming[level].directResponses = direct;
    }
    return finishResults(copy);
  }

  test('a run without the phase renders as not measured, with no budget for it', () => {
    const without = JSON.parse(JSON.stringify(measured)) as typeof measured;
    for (const level of ['c1', 'c16'] as const) {
      delete without.streaming[level].storedResponses;
      delete without.streaming[level].directResponses;
    }
    const r = finishResults(without);
    expect(streamBudget(r)).toEqual([]);
    expect(renderReadmeSection(r)).toContain('**Responses API streams:** not measured in this run');
    expect(renderResults(r)).toContain('## Responses API stream against the chat stream\n\nThe same fake provider');
    expect(renderResults(r)).toContain('Not measured in this run');
  });

  test("a run with the phase: RESULTS.md, the README and the budgets show the Responses stream's lag against the chat stream's", () => {
    const r = withResponsesPhase(1.1);
    const chatP99 = r.streaming.c1.stored!.eventLag!.p99;
    const p99 = r.streaming.c1.storedResponses!.eventLag!.p99;
    const section = renderReadmeSection(r);
    expect(section).toContain(`event lag p99 ${p99.toFixed(2)} ms at concurrency 1 against ${chatP99.toFixed(2)} ms for chat streams`);
    expect(section).toContain(`${r.streaming.c16.storedResponses!.eventLag!.p99.toFixed(2)} ms against ${r.streaming.c16.stored!.eventLag!.p99.toFixed(2)} ms at concurrency 16`);
    expect(figuresNotHeld(section, r)).toEqual([]);
    const tables = renderResults(r);
    expect(tables).toContain('| direct call, Responses API |');
    expect(tables).toContain('| this proxy, stored key, Responses API |');
    expect(tables).toContain(`| c=1 | ${r.streaming.c1.stored!.eventLag!.p50.toFixed(3)} / ${chatP99.toFixed(3)} | ${r.streaming.c1.storedResponses!.eventLag!.p50.toFixed(3)} / ${p99.toFixed(3)} |`);
    expect(streamBudget(r).map((b) => [b.name, b.met])).toEqual([
      ['Responses API stream adds no buffering (stored key, c=1)', true],
      ['Responses API stream adds no buffering (stored key, c=16)', true],
    ]);
  });

  test('a Responses stream whose events wait longer than the chat stream misses its budget', () => {
    const r = withResponsesPhase(3);
    expect(streamBudget(r).map((b) => b.met)).toEqual([false, false]);
    expect(r.headline.missed.map((b) => b.name)).toContain('Responses API stream adds no buffering (stored key, c=1)');
  });

  test('the committed run either holds the phase or says it was not measured', () => {
    const measuredIt = results.streaming.c1.storedResponses?.eventLag !== undefined;
    expect(splitReadme(readme).section.includes('**Responses API streams:** not measured in this run')).toBe(!measuredIt);
    if (measuredIt) expect(streamBudget(results)).toHaveLength(2);
  });
});
