import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { PROJECT_ROOT } from './support/synth';

/** docs/architecture.md "Layout": the folder list is complete, the dependency rules hold, test/unit mirrors lambda/. */
const LAMBDA = join(PROJECT_ROOT, 'lambda');
const doc = readFileSync(join(PROJECT_ROOT, 'docs/architecture.md'), 'utf8');
const layoutBlock = /## Layout[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
const documented = layoutBlock
  .split('\n')
  .map((line) => line.split(/\s+/)[0])
  .filter((entry) => entry.startsWith('lambda/'));

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|tsx|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
const IMPORT = /(?:import|export)\s[^'"`;]*?from\s*['"](\.[^'"]+)['"]|import\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g;
/** The lambda/ folders that the files under `folder` (or the top-level file `folder`) import from outside it. */
function importedFrom(folder: string): Set<string> {
  const root = join(LAMBDA, folder);
  const found = new Set<string>();
  for (const file of folder.endsWith('.ts') ? [root] : files(root)) {
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1] ?? m[2]);
      const inside = relative(root, target);
      if (!folder.endsWith('.ts') && !inside.startsWith('..')) continue;
      const node = relative(LAMBDA, target).split(sep)[0];
      if (statSync(join(LAMBDA, node), { throwIfNoEntry: false })?.isDirectory()) found.add(node);
    }
  }
  return found;
}

describe('the documented layout', () => {
  it('names every folder and top-level file of lambda/, and nothing that is not there', () => {
    const actual = readdirSync(LAMBDA, { withFileTypes: true })
      .filter((e) => e.isDirectory() || (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')))
      .map((e) => `lambda/${e.name}${e.isDirectory() ? '/' : ''}`);
    const topLevel = documented.filter((entry) => entry.split('/').filter(Boolean).length === 2);
    expect([...topLevel].sort()).toEqual(actual.sort());
    expect(documented.filter((entry) => !existsSync(join(PROJECT_ROOT, entry)))).toEqual([]);
  });

  it('the base files import no folder; store/ imports no feature (no folder at all); sse/ knows no provider', () => {
    for (const base of ['json.ts', 'tables.ts', 'errors.ts', 'logger.ts', 'retry.ts'])
      expect([base, [...importedFrom(base)]]).toEqual([base, []]);
    expect([...importedFrom('store')]).toEqual([]);
    expect([...importedFrom('sse')]).toEqual([]);
    expect([...importedFrom('tags')]).toEqual([]);
  });

  it('each feature keeps its DynamoDB adapter in its own room; auth/ uses no other feature (tags/ is a value type below them all), usage/ knows no budget', () => {
    for (const room of ['auth', 'keys', 'budgets', 'cache', 'usage'])
      expect([room, existsSync(join(LAMBDA, room, 'dynamodb'))]).toEqual([room, true]);
    expect([...importedFrom('auth')].sort()).toEqual(['store', 'tags']);
    expect(importedFrom('usage').has('budgets')).toBe(false);
  });
});

/**
 * The "Dependencies between folders" list: one line per folder (or group of base files), `subject → imports: why`, where
 * `imports` is every lambda/ folder the subject imports, or `nothing`.
 */
const dependencyBlock = /## Dependencies between folders\n([\s\S]*?)\n## /.exec(doc)?.[1] ?? '';
const documentedImports = [...dependencyBlock.matchAll(/^- (.+?) → (.+?): /gm)].flatMap(([, subjects, imports]) => {
  const folders = imports === 'nothing' ? [] : [...imports.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]);
  return [...subjects.matchAll(/`([^`]+)`/g)].map((m) => ({
    subject: m[1].replace(/\/$/, ''),
    folders: folders.sort(),
  }));
});

describe('the documented dependencies between folders', () => {
  it('list every folder of lambda/ once', () => {
    const folders = readdirSync(LAMBDA, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const listed = documentedImports.map((line) => line.subject).filter((subject) => !subject.endsWith('.ts'));
    expect([...listed].sort()).toEqual(folders.sort());
  });

  it('name for each folder and base file exactly the lambda/ folders it imports', () => {
    expect(documentedImports.length).toBeGreaterThan(0);
    for (const { subject, folders } of documentedImports)
      expect([subject, [...importedFrom(subject)].sort()]).toEqual([subject, folders]);
  });
});

describe('test/unit mirrors lambda/', () => {
  const unit = join(PROJECT_ROOT, 'test/unit');
  it('every folder of test/unit is a folder of lambda/', () => {
    const lambdaFolders = readdirSync(LAMBDA, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const unitFolders = readdirSync(unit, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(unitFolders.filter((name) => !lambdaFolders.includes(name))).toEqual([]);
  });

  it('a test directly in test/unit tests a file directly in lambda/', () => {
    for (const entry of readdirSync(unit).filter((name) => name.endsWith('.test.ts'))) {
      expect([entry, existsSync(join(LAMBDA, entry.replace(/\.test\.ts$/, '.ts')))]).toEqual([entry, true]);
    }
  });

  it('no unit test needs DynamoDB Local or the proxy server: those are for test/integration', () => {
    const needing = files(unit).filter((file) =>
      /support\/(tables|proxy-server|in-process-proxy)|createTestTables|startProxy|startInProcessProxy/.test(
        readFileSync(file, 'utf8'),
      ),
    );
    expect(needing.map((file) => relative(PROJECT_ROOT, file))).toEqual([]);
  });

  it('test/unit runs in the jest project that starts nothing and hides the store from its tests', async () => {
    type Project = { roots: string[]; globalSetup?: string; setupFiles?: string[] };
    const configFile = join(PROJECT_ROOT, 'jest.config.js');
    const { default: config } = (await import(configFile)) as { default: { projects: Project[] } };
    const holding = config.projects.filter((project) =>
      project.roots.some((root) => root.replace('<rootDir>', PROJECT_ROOT) === unit),
    );
    expect(holding).toHaveLength(1);
    expect(holding[0].globalSetup).toBeUndefined();
    expect(holding[0].setupFiles).toContain('<rootDir>/test/support/no-store.ts');
  });
});
