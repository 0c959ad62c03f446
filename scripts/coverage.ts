// `npm run coverage`: line coverage of lambda/ and lib/ over the whole jest suite, wherever the code runs
// (docs/development.md, "Coverage"). Two places, both measured by V8:
//   - jest's workers run the TypeScript itself (unit tests, handlers loaded in-process, the CDK stack):
//     jest's own V8 coverage, mapped back through swc's source maps;
//   - child processes run the built bundles (the local server, the consumers): every process of the
//     run inherits NODE_V8_COVERAGE, so Node writes its raw coverage when it exits, and c8 maps the
//     bundles' part of it back to lambda/ through the source maps BUILD_SOURCEMAP=1 adds to the build
//     (unminified: a minified bundle's maps are too coarse for V8's ranges, and count lines as run
//     that were not).
// The two reports are added line by line. Arguments go to jest (`npm run coverage -- test/unit`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import libReport from 'istanbul-lib-report';
import reports from 'istanbul-reports';
import { bundlesReport, figuresByFolder, figuresTable, mergeReports } from './coverage-merge';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'coverage');
const RAW = join(OUT, 'raw');

rmSync(OUT, { recursive: true, force: true });
mkdirSync(RAW, { recursive: true });

const jest = spawnSync(
  process.execPath,
  [
    join(ROOT, 'node_modules/jest/bin/jest.js'),
    '--coverage',
    '--coverageProvider=v8',
    `--coverageDirectory=${join(OUT, 'workers')}`,
    '--coverageReporters=json',
    `--collectCoverageFrom=${JSON.stringify(['lambda/**/*.{ts,tsx}', 'lib/**/*.ts', '!lambda/dashboard/src/**'])}`,
    ...process.argv.slice(2),
  ],
  {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, NODE_V8_COVERAGE: RAW, BUILD_SOURCEMAP: '1', BUILD_MINIFY: '0' },
  },
);

const workers = JSON.parse(readFileSync(join(OUT, 'workers', 'coverage-final.json'), 'utf8'));
const bundles = bundlesReport(ROOT, RAW, OUT);
const map = await mergeReports(ROOT, [workers, ...(bundles.report ? [bundles.report] : [])]);
const figures = figuresByFolder(ROOT, map);

const context = libReport.createContext({ dir: OUT, coverageMap: map });
for (const report of ['json', 'json-summary', 'html'] as const)
  reports.create(report, { subdir: report === 'html' ? 'html' : undefined }).execute(context);
writeFileSync(
  join(OUT, 'folders.json'),
  JSON.stringify(Object.fromEntries(figures.map(({ folder, summary }) => [folder, summary.toJSON()])), null, 2),
);

console.log(`\n${figuresTable(figures)}\n`);
console.log(`counted: jest's workers and ${bundles.processes} processes that ran a bundle; coverage/html/index.html`);
if (jest.status !== 0) console.log(`jest exited with ${jest.status}: the figures count what ran`);
process.exit(jest.status ?? 1);
