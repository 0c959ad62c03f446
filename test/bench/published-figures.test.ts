/**
 * The benchmark's published figures come from one run: the committed bench/results.json.
 * The README's performance section, RESULTS.md and FINDINGS.md are what the renderers make of
 * that file, and the README quotes no number the file does not hold.
 */
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
  for (const level of ['c1', 'c16'] as const) expect(results.streaming[level].stored?.eventLag?.n).toBeGreaterThan(0);
  expect(results.disconnects.map((d) => d.id)).toEqual(['stored', 'pipe', 'portkey']);
  const budget = (name: string) => results.budgets.find((b) => b.name.startsWith(name));
  expect(budget('CPU per stored-key request, c=1 paced')?.target).toBe('≤ 1.0 ms');
  expect(budget('CPU per stored-key request, c=16')).toBeDefined();
  expect(budget('Clients leaving mid-request: this proxy')).toBeDefined();
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
