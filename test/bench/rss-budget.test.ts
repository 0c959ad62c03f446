/**
 * Issue 16's memory target: the local server's RSS at c=16 is judged against 100 MB, on the highest
 * figure of its three modes, and the published outputs quote that target.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { judgeBudgets } from '../../bench/budgets';
import type { Results } from '../../bench/results';

const ROOT = join(__dirname, '..', '..');
const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as Results;

/** The committed run with the local server's c=16 RSS replaced, mode by mode. */
function withRss(mb: { stored: number; passThrough: number; cacheHit: number }): Results {
  const copy = structuredClone(results);
  for (const mode of ['stored', 'passThrough', 'cacheHit'] as const) copy.resources.c16[mode]!.rssMaxMb = mb[mode];
  return copy;
}

const rssBudget = (r: Results) => judgeBudgets(r).find((b) => /RSS under load \(c=16\)/.test(b.name))!;

test('the RSS budget is 100 MB at c=16, met at 100 MB and missed above it, whichever mode reached the peak', () => {
  const met = rssBudget(withRss({ stored: 97, passThrough: 100, cacheHit: 95 }));
  expect(met.target).toBe('≤ 100 MB');
  expect(met.met).toBe(true);
  expect(met.measured).toBe('100 MB');

  const missed = rssBudget(withRss({ stored: 97, passThrough: 99, cacheHit: 101 }));
  expect(missed.met).toBe(false);
  expect(missed.measured).toBe('101 MB');
  // A miss says what the figure holds, and that Lambda's figure is another one.
  expect(missed.why).toMatch(/Node alone \(the bare pipe, same load\) holds \d+ MB/);
  expect(missed.why).toContain('bench/MEMORY.md');
});

test('RESULTS.md, FINDINGS.md and the README quote the 100 MB target', () => {
  for (const file of ['bench/RESULTS.md', 'bench/FINDINGS.md']) expect(readFileSync(join(ROOT, file), 'utf8')).toMatch(/RSS under load \(c=16\)[^\n]*≤ 100 MB/);
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const budget = rssBudget(results);
  if (!budget.met) expect(readme).toContain(`Local server RSS under load (c=16): ${budget.measured} (target ≤ 100 MB)`);
  expect(results.budgets.find((b) => /RSS under load/.test(b.name))?.target).toBe('≤ 100 MB');
});
