/**
 * `npm start` builds only what changed since the last build (scripts/build.mjs --if-changed): a second
 * start goes straight to the server, while an edited source, a new file or a new install still
 * rebuilds. Run on a copy of the sources, so the suite's own bundles are left alone.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const PROJECT_ROOT = resolve(__dirname, '../..');

let copy: string;

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'build-if-changed-'));
  for (const path of ['lambda', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json'])
    cpSync(join(PROJECT_ROOT, path), join(copy, path), { recursive: true });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** The build as npm start runs it (`env` added to the environment); what it printed. */
function buildIfChanged(env: Record<string, string> = {}): string {
  const run = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed'], {
    cwd: copy,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout;
}
const builtAt = () => statSync(join(copy, 'dist/local/server.mjs')).mtimeMs;

test('a second build with nothing changed builds nothing and leaves the bundles as they were', () => {
  expect(buildIfChanged()).toMatch(/^built dist\/lambda\/handler\.mjs/);
  const first = builtAt();
  expect(buildIfChanged()).toBe('dist/ is current: nothing to build\n');
  expect(builtAt()).toBe(first);
});

test('an edited source, a new file under lambda/ and a new install each build again', () => {
  const later = new Date(Date.now() + 60_000);
  const changes = [
    () => utimesSync(join(copy, 'lambda/base/json.ts'), later, later),
    () => writeFileSync(join(copy, 'lambda/base/new-helper.ts'), 'export const answer = 42;\n'),
    () => utimesSync(join(copy, 'package-lock.json'), later, later),
  ];
  for (const change of changes) {
    expect(buildIfChanged()).toBe('dist/ is current: nothing to build\n');
    change();
    expect(buildIfChanged()).toMatch(/^built dist\/lambda\/handler\.mjs/);
  }
});

test('a build with source maps (BUILD_SOURCEMAP=1, npm run coverage) is its own build: the next normal one has none', () => {
  const bundle = () => readFileSync(join(copy, 'dist/local/server.mjs'), 'utf8');
  buildIfChanged({ BUILD_SOURCEMAP: '0' });
  expect(buildIfChanged({ BUILD_SOURCEMAP: '1' })).toMatch(/^built dist\/lambda\/handler\.mjs/);
  expect(bundle()).toMatch(/\/\/# sourceMappingURL=server\.mjs\.map\s*$/);
  const map = JSON.parse(readFileSync(join(copy, 'dist/local/server.mjs.map'), 'utf8'));
  expect(map.sources).toContain('../../lambda/local/server.ts');
  expect(map.sourcesContent).toBeUndefined();
  expect(buildIfChanged({ BUILD_SOURCEMAP: '1' })).toBe('dist/ is current: nothing to build\n');

  expect(buildIfChanged({ BUILD_SOURCEMAP: '0' })).toMatch(/^built dist\/lambda\/handler\.mjs/);
  expect(bundle()).not.toContain('sourceMappingURL');
});
