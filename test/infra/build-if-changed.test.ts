/**
 * `npm start` builds only what changed since the last build (scripts/build.mjs --if-changed): a second
 * start goes straight to the server, while an edited source, a new file or a new install still
 * rebuilds. Run on a copy of the sources, so the suite's own bundles are left alone.
 *
 * Three real builds (a normal one, a rebuild after a change, one with source maps). The script's
 * choice is its fingerprint of the inputs against the one the last build recorded
 * (scripts/build-inputs.mjs): the first test shows the script and that fingerprint agree, so each
 * other kind of change is shown to alter the fingerprint rather than by building once more.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const PROJECT_ROOT = resolve(__dirname, '../..');
const NOTHING_TO_BUILD = 'dist/ is current: nothing to build\n';
const BUILT = /^built dist\/lambda\/handler\.mjs/;

let copy: string;

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'build-if-changed-'));
  for (const path of ['lambda', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json'])
    cpSync(join(PROJECT_ROOT, path), join(copy, path), { recursive: true });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/**
 * The build as npm start runs it (`env` added to the environment); what it printed. Minified and
 * without maps unless `env` says otherwise, whatever the suite runs under (npm run coverage sets both).
 */
function buildIfChanged(env: Record<string, string> = {}): string {
  const run = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed'], {
    cwd: copy,
    encoding: 'utf8',
    env: { ...process.env, BUILD_SOURCEMAP: '0', BUILD_MINIFY: '1', ...env },
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout;
}
const builtAt = () => statSync(join(copy, 'dist/local/server.mjs')).mtimeMs;
const bundle = () => readFileSync(join(copy, 'dist/local/server.mjs'), 'utf8');
/** The copy's build-inputs module, run with `code` (its exports in scope as `inputs`); what it printed. */
function withBuildInputs(code: string): string {
  const run = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `const inputs = await import('./scripts/build-inputs.mjs'); ${code}`],
    { cwd: copy, encoding: 'utf8' },
  );
  expect(run.stderr).toBe('');
  return run.stdout;
}
/** The fingerprint build.mjs computes for a normal build (minified, no source maps). */
const NORMAL = `inputs.buildInputs('.', { minify: true })`;
/** Whether `--if-changed` would skip a normal build now: that fingerprint against the one the last build recorded. */
const normalBuildCurrent = (): boolean =>
  withBuildInputs(`console.log(inputs.isBuildCurrent('.', ${NORMAL}))`).trim() === 'true';

test('a second build with nothing changed builds nothing and leaves the bundles as they were', () => {
  expect(buildIfChanged()).toMatch(BUILT);
  const first = builtAt();
  expect(bundle()).not.toContain('sourceMappingURL');
  expect(normalBuildCurrent()).toBe(true);
  expect(buildIfChanged()).toBe(NOTHING_TO_BUILD);
  expect(builtAt()).toBe(first);
});

test('an edited source, a new file under lambda/ and a new install each build again', () => {
  const later = new Date(Date.now() + 60_000);
  const changes = [
    () => utimesSync(join(copy, 'lambda/base/json.ts'), later, later),
    () => utimesSync(join(copy, 'package-lock.json'), later, later),
    () => writeFileSync(join(copy, 'lambda/base/new-helper.ts'), 'export const answer = 42;\n'),
  ];
  for (const change of changes) {
    expect(normalBuildCurrent()).toBe(true);
    change();
    expect(normalBuildCurrent()).toBe(false);
    // As a build would, without building: the next change is then seen on its own.
    withBuildInputs(`inputs.recordBuildInputs('.', ${NORMAL})`);
  }
  // And the script acts on it: after one more change, it builds.
  utimesSync(join(copy, 'lambda/base/new-helper.ts'), later, new Date(later.getTime() + 60_000));
  expect(buildIfChanged()).toMatch(BUILT);
  expect(buildIfChanged()).toBe(NOTHING_TO_BUILD);
});

test('a build with source maps (BUILD_SOURCEMAP=1, npm run coverage) is its own build: the next normal one has none', () => {
  expect(buildIfChanged({ BUILD_SOURCEMAP: '1' })).toMatch(BUILT);
  expect(bundle()).toMatch(/\/\/# sourceMappingURL=server\.mjs\.map\s*$/);
  const map = JSON.parse(readFileSync(join(copy, 'dist/local/server.mjs.map'), 'utf8'));
  expect(map.sources).toContain('../../lambda/local/server.ts');
  expect(map.sourcesContent).toBeUndefined();
  expect(buildIfChanged({ BUILD_SOURCEMAP: '1' })).toBe(NOTHING_TO_BUILD);
  // The next normal build is a build (the first test showed what a normal build writes: no map).
  expect(normalBuildCurrent()).toBe(false);
});
