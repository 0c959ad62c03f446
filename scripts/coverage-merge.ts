// The steps of `npm run coverage` (scripts/coverage.ts) that shape its numbers, apart from the run so a
// unit test can give them small inputs: which raw V8 entries to keep, the merge of the two reports,
// and the figures per folder.
import { transformSync } from 'esbuild';
import libCoverage, { type CoverageMap, type CoverageMapData, type CoverageSummary } from 'istanbul-lib-coverage';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8ToIstanbul from 'v8-to-istanbul';

/** One process's raw V8 coverage, as Node writes it under NODE_V8_COVERAGE. */
export interface RawV8Coverage {
  result: Array<{ url: string; functions: unknown[] }>;
  'source-map-cache'?: unknown;
}

/**
 * The scripts of `raw` that are built bundles (`<distUrl>…/*.mjs`), or undefined when it ran none.
 * A jest worker's own entries are dropped: its swc-compiled files would be mapped to the wrong
 * lines, and jest reports them itself. So is Node's copy of each source map (megabytes per
 * process): the report reads the map beside the bundle once.
 */
export function bundleEntries(raw: RawV8Coverage, distUrl: string): RawV8Coverage | undefined {
  const result = raw.result.filter(({ url }) => url.startsWith(distUrl) && url.endsWith('.mjs'));
  return result.length ? { result } : undefined;
}

/**
 * The built bundles' coverage, from the raw files Node wrote into `rawDir` (emptied on the way), as
 * one report: c8 adds up every process's counts per bundle, then maps them back through the source
 * maps beside the bundles in `<root>/dist`. Undefined when no process ran a bundle.
 */
export function bundlesReport(
  root: string,
  rawDir: string,
  outDir: string,
): { processes: number; report?: CoverageMapData } {
  const kept = join(outDir, 'bundles');
  mkdirSync(kept, { recursive: true });
  const distUrl = `${pathToFileURL(join(root, 'dist')).href}/`;
  let processes = 0;
  for (const name of readdirSync(rawDir)) {
    // One file at a time: a jest worker's own runs to megabytes.
    const bundles = bundleEntries(JSON.parse(readFileSync(join(rawDir, name), 'utf8')), distUrl);
    if (bundles) writeFileSync(join(kept, `${++processes}.json`), JSON.stringify(bundles));
    rmSync(join(rawDir, name));
  }
  if (!processes) return { processes };
  const c8 = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/c8/bin/c8.js'),
      'report',
      `--temp-directory=${kept}`,
      `--reports-dir=${join(outDir, 'bundles-report')}`,
      '--reporter=json',
      // Every source the maps name, dependencies too: mergeReports keeps lambda/'s. c8's own filter
      // after mapping would see the maps' relative paths (../../lambda/…) and drop them all.
      '--merge-async',
    ],
    { cwd: root, stdio: 'inherit' },
  );
  if (c8.status !== 0) throw new Error(`c8 report exited with ${c8.status}`);
  return { processes, report: JSON.parse(readFileSync(join(outDir, 'bundles-report', 'coverage-final.json'), 'utf8')) };
}

/** Whether `path` (relative to the root, `/`-separated) is measured: the TypeScript of lambda/ and lib/. */
export function isMeasured(path: string): boolean {
  // The dashboard's browser code runs in Chromium, where neither report sees it.
  return /^(lambda|lib)\//.test(path) && !path.startsWith('lambda/dashboard/src/') && /(?<!\.d)\.tsx?$/.test(path);
}

function* measuredFiles(root: string, folder: string): Generator<string> {
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) yield* measuredFiles(root, path);
    else if (isMeasured(path)) yield join(root, path);
  }
}

/**
 * Every line of a file no process loaded, as not run (what jest does for such files; its own list
 * only holds files under the test roots). A file of types only compiles to nothing, so it has no
 * line to run and is left out, as it is when it is loaded.
 */
async function notRun(file: string): Promise<CoverageMapData | undefined> {
  const source = readFileSync(file, 'utf8');
  const compiled = transformSync(source, { loader: file.endsWith('.tsx') ? 'tsx' : 'ts' }).code;
  if (!compiled.replace(/export\s*\{\s*\};?/g, '').trim()) return undefined;
  const converter = v8ToIstanbul(file, 0, { source });
  await converter.load();
  converter.applyCoverage([
    {
      functionName: '(empty-report)',
      isBlockCoverage: true,
      ranges: [{ startOffset: 0, endOffset: source.length, count: 0 }],
    },
  ]);
  return converter.toIstanbul() as CoverageMapData;
}

/**
 * The measured files of `root` (isMeasured) from the reports, their counts added line by line: both
 * reports count every line of the original source, so a line run only by a server process counts as
 * run. A file in neither report counts as not run.
 */
export async function mergeReports(root: string, reports: CoverageMapData[]): Promise<CoverageMap> {
  const map = libCoverage.createCoverageMap({});
  for (const report of reports) map.merge(report);
  map.filter((file) => isMeasured(relative(root, file).split(sep).join('/')));
  const seen = new Set(map.files());
  for (const folder of ['lambda', 'lib'])
    for (const file of measuredFiles(root, folder)) {
      if (seen.has(file)) continue;
      const report = await notRun(file);
      if (report) map.merge(report);
    }
  return map;
}

export interface FolderFigures {
  /** `lambda/auth`, `lambda` (its loose files and all its folders), or `total`. */
  folder: string;
  summary: CoverageSummary;
}

/** Figures per top-level folder of lambda/ and lib/, then per root, then in total. */
export function figuresByFolder(root: string, map: CoverageMap): FolderFigures[] {
  const folders = new Map<string, CoverageSummary>();
  const add = (folder: string, summary: CoverageSummary) => {
    if (!folders.has(folder)) folders.set(folder, libCoverage.createCoverageSummary());
    folders.get(folder)!.merge(summary);
  };
  for (const file of map.files()) {
    const parts = relative(root, file).split(sep);
    const summary = map.fileCoverageFor(file).toSummary();
    add(parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/ (loose files)`, summary);
    add(parts[0]!, summary);
    add('total', summary);
  }
  const order = (folder: string) => (folder === 'total' ? '~' : folder.includes('/') ? folder : `${folder}/~`);
  return [...folders]
    .sort(([a], [b]) => (order(a) < order(b) ? -1 : 1))
    .map(([folder, summary]) => ({ folder, summary }));
}

/** The figures as a plain table: lines first, as docs/development.md records them. */
export function figuresTable(figures: FolderFigures[]): string {
  const kinds = ['lines', 'statements', 'branches', 'functions'] as const;
  const width = Math.max(...figures.map(({ folder }) => folder.length), 'folder'.length);
  const cell = (text: string) => text.padStart(12);
  const head = 'folder'.padEnd(width) + kinds.map((kind) => cell(kind)).join('');
  const rows = figures.map(
    ({ folder, summary }) =>
      folder.padEnd(width) +
      kinds.map((kind) => cell(summary.data[kind].total ? `${summary.data[kind].pct.toFixed(1)} %` : '-')).join(''),
  );
  return [head, ...rows].join('\n');
}
