/**
 * Everything a run writes, from one results object: bench/results.json, RESULTS.md,
 * FINDINGS.md and the README's performance section. `npm run bench` writes them after
 * measuring; `npm run bench:render` rewrites them from the committed results.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { judgeBudgets } from './budgets';
import { repriceCost } from './cost-inputs';
import { renderFindings } from './findings';
import { computeHeadline } from './headline';
import { replaceReadmeSection } from './readme';
import { renderResults } from './report';
import type { Results } from './results';

/** What a run measured; budgets and headline are derived from it. */
export type Measured = Omit<Results, 'budgets' | 'headline' | 'durationSeconds' | 'profile'>;

// Every bench entry point runs from the repository's root (npm scripts do).
const ROOT = process.cwd();
export const RESULTS_JSON = join(ROOT, 'bench', 'results.json');
const RESULTS_MD = join(ROOT, 'bench', 'RESULTS.md');
const FINDINGS_MD = join(ROOT, 'bench', 'FINDINGS.md');
const README = join(ROOT, 'README.md');
export const OUTPUTS = ['bench/results.json', 'bench/RESULTS.md', 'bench/FINDINGS.md', "README.md's performance section"];

/** Prices the run, judges the budgets and derives the headline (pure: the same measurements give the same text). */
export function finishResults(measured: Omit<Results, 'budgets' | 'headline'>): Results {
  const r = { ...measured, cost: repriceCost(measured) };
  const budgets = judgeBudgets(r);
  return { ...r, budgets, headline: computeHeadline(r, budgets) };
}

export function writeOutputs(results: Results): void {
  writeFileSync(RESULTS_JSON, JSON.stringify(results, null, 2) + '\n');
  writeFileSync(RESULTS_MD, renderResults(results));
  writeFileSync(FINDINGS_MD, renderFindings(results));
  writeFileSync(README, replaceReadmeSection(readFileSync(README, 'utf8'), results));
}
