/**
 * `npm run coverage` counts a line wherever it ran (scripts/coverage-merge.ts). Two tiny runs of one
 * source file, each taking a different branch, as the suite's server processes and jest's workers do:
 * each report alone misses a line, their merge misses none; a file no process loaded counts as not
 * run; types-only files, the dashboard's browser code and every script outside the bundles are left out.
 */
import { spawnSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CoverageMapData } from 'istanbul-lib-coverage';
import { bundleEntries, bundlesReport, figuresByFolder, isMeasured, mergeReports } from '../../scripts/coverage-merge';

const PROJECT_ROOT = resolve(__dirname, '../..');

const SOURCES: Record<string, string> = {
  'lambda/demo/pick.ts': [
    'export function pick(place: string): string {',
    "  if (place === 'server') {",
    "    return 'a server process';",
    '  }',
    "  return 'a jest worker';",
    '}',
    '',
  ].join('\n'),
  'lambda/demo/shapes.ts': 'export interface Shape {\n  side: number;\n}\n',
  'lambda/demo/never-loaded.ts': 'export const never = (n: number) => n + 1;\n',
  'lambda/dashboard/src/screen.ts': 'export const screen = () => 1;\n',
  'lib/stack.ts': 'export const stack = (name: string) => `stack ${name}`;\n',
  'lambda/entry/server.ts': "import { pick } from '../demo/pick';\nconsole.log(pick('server'));\n",
  'lambda/entry/worker.ts': "import { pick } from '../demo/pick';\nconsole.log(pick('worker'));\n",
};

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'coverage-merge-'));
  for (const [path, text] of Object.entries(SOURCES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  // c8 as the project installs it.
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Builds `entry` as scripts/build.mjs does for coverage, into `<root>/<outDir>`, runs it under NODE_V8_COVERAGE and returns the raw folder. */
function runBundle(entry: string, outDir: string): string {
  const outfile = join(root, outDir, 'bundle.mjs');
  buildSync({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    minify: false,
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'silent',
  });
  const raw = mkdtempSync(join(root, 'raw-'));
  const run = spawnSync(process.execPath, [outfile], {
    env: { ...process.env, NODE_V8_COVERAGE: raw },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  return raw;
}

/** Hits of each line (1-based) of one file in a report. */
function lineHits(report: CoverageMapData, file: string): Record<number, number> {
  const coverage = report[join(root, file)]!;
  const hits: Record<number, number> = {};
  for (const [id, location] of Object.entries(coverage.statementMap))
    hits[location.start.line] = (hits[location.start.line] ?? 0) + coverage.s[id]!;
  return hits;
}

test('a line run only by a server process and one run only in a worker both count once the reports merge', async () => {
  const serverRaw = runBundle('lambda/entry/server.ts', 'dist/local');
  // Of everything the process ran (Node's own modules among them), only the bundle is kept.
  const [rawFile] = readdirSync(serverRaw);
  const raw = JSON.parse(readFileSync(join(serverRaw, rawFile!), 'utf8'));
  expect(raw.result.length).toBeGreaterThan(1);
  const bundleUrl = pathToFileURL(join(root, 'dist/local/bundle.mjs')).href;
  expect(bundleEntries(raw, `${pathToFileURL(join(root, 'dist')).href}/`)!.result.map(({ url }) => url)).toEqual([
    bundleUrl,
  ]);
  expect(bundleEntries(raw, `${pathToFileURL(join(root, 'elsewhere')).href}/`)).toBeUndefined();

  const server = bundlesReport(root, serverRaw, join(root, 'out-server'));
  // The other side, standing for a jest worker: another process, the other branch.
  const worker = bundlesReport(root, runBundle('lambda/entry/worker.ts', 'dist/worker'), join(root, 'out-worker'));
  expect(server.processes).toBe(1);

  expect(lineHits(server.report!, 'lambda/demo/pick.ts')).toMatchObject({ 3: 1, 5: 0 });
  expect(lineHits(worker.report!, 'lambda/demo/pick.ts')).toMatchObject({ 3: 0, 5: 1 });

  const merged = await mergeReports(root, [server.report!, worker.report!]);
  expect(lineHits(merged.toJSON(), 'lambda/demo/pick.ts')).toMatchObject({ 3: 1, 5: 1 });
  expect(merged.fileCoverageFor(join(root, 'lambda/demo/pick.ts')).toSummary().lines.pct).toBe(100);

  // Never loaded: every line counts as not run. Types only, browser code: not counted at all.
  expect(merged.fileCoverageFor(join(root, 'lib/stack.ts')).toSummary().lines).toMatchObject({ total: 1, covered: 0 });
  expect(
    merged
      .files()
      .map((file) => file.slice(root.length + 1))
      .sort(),
  ).toEqual([
    'lambda/demo/never-loaded.ts',
    'lambda/demo/pick.ts',
    'lambda/entry/server.ts',
    'lambda/entry/worker.ts',
    'lib/stack.ts',
  ]);

  const figures = Object.fromEntries(figuresByFolder(root, merged).map(({ folder, summary }) => [folder, summary]));
  expect(Object.keys(figures)).toEqual(['lambda/demo', 'lambda/entry', 'lambda', 'lib/ (loose files)', 'lib', 'total']);
  expect(figures.total!.lines.total).toBe(figures['lambda']!.lines.total + figures['lib']!.lines.total);
});

test('only the TypeScript of lambda/ and lib/ is measured, not the browser code', () => {
  expect(['lambda/auth/verify.ts', 'lib/proxy-stack.ts', 'lambda/dashboard/handler.tsx'].every(isMeasured)).toBe(true);
  expect(
    ['lambda/dashboard/src/app.tsx', 'lambda/http/virtual-modules.d.ts', 'lib/bundling/x.mjs', 'test/unit/a.ts'].some(
      isMeasured,
    ),
  ).toBe(false);
});
