/**
 * scripts/lint-cache.mjs carries ESLint's cache from one checkout to another (test-all.sh: a fresh
 * clone in CI lints only what changed). Shown with the project's own ESLint command and
 * configuration on three small checkouts at different paths: what is unchanged is not linted again,
 * and a type-aware result whose imports changed is never carried over (the cache does not track them).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const PROJECT_ROOT = resolve(__dirname, '../..');
/** The ESLint part of `npm run lint`, as package.json runs it. */
const ESLINT_ARGS = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: { lint: string } }
).scripts.lint
  .split(' && ')[0]
  .split(' ')
  .slice(1);

const USES_B = "import { b } from './b';\n\nexport function a(): void {\n  b();\n}\n";
const SYNC_B = 'export function b(): number {\n  return 1;\n}\n';
const ASYNC_B = 'export async function b(): Promise<number> {\n  return 1;\n}\n';
const A_TEST = "import { a } from '../lambda/a';\n\ntest('a', () => a());\n";

let root: string;
let saved: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'lint-cache-'));
  saved = join(root, 'saved');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A checkout with the project's lint configuration and its packages (but its own node_modules/.cache). */
function checkout(name: string, b: string): string {
  const dir = join(root, name);
  const files: Record<string, string> = {
    'lambda/a.ts': USES_B,
    'lambda/b.ts': b,
    'test/a.test.ts': A_TEST,
    'tsconfig.json': JSON.stringify({
      compilerOptions: { strict: true, module: 'commonjs', target: 'es2022', types: ['jest', 'node'] },
      include: ['lambda', 'test'],
    }),
    'eslint.config.js': readFileSync(join(PROJECT_ROOT, 'eslint.config.js'), 'utf8'),
    'package.json': JSON.stringify({ type: 'module' }),
    'package-lock.json': readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8'),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  mkdirSync(join(dir, 'node_modules'));
  for (const entry of readdirSync(join(PROJECT_ROOT, 'node_modules')))
    if (entry !== '.cache') symlinkSync(join(PROJECT_ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  return dir;
}

function run(dir: string, command: string, args: string[]) {
  return spawnSync(process.execPath, [command, ...args], { cwd: dir, encoding: 'utf8' });
}

/** Lints with `--debug`; the files ESLint took from its cache instead of linting them. */
function lint(dir: string): { status: number | null; stdout: string; skipped: string[] } {
  const result = run(dir, 'node_modules/eslint/bin/eslint.js', [...ESLINT_ARGS, '--debug']);
  const skipped = [...result.stderr.matchAll(/Skipping file since it hasn't changed: (\S+)/g)].map(([, file]) =>
    file.slice(dir.length + 1),
  );
  return { status: result.status, stdout: result.stdout, skipped };
}

const script = join(PROJECT_ROOT, 'scripts/lint-cache.mjs');

test('a cache saved after a passing lint serves a checkout at another path: nothing unchanged is linted again', () => {
  const first = checkout('first', SYNC_B);
  expect(lint(first)).toMatchObject({ status: 0, skipped: [] });
  expect(run(first, script, ['save', saved]).status).toBe(0);
  expect(readFileSync(join(saved, 'eslint.json'), 'utf8')).not.toContain(first);

  const second = checkout('second', SYNC_B);
  expect(run(second, script, ['restore', saved]).status).toBe(0);
  const again = lint(second);
  expect(again.status).toBe(0);
  expect(again.skipped.sort()).toEqual(['eslint.config.js', 'lambda/a.ts', 'lambda/b.ts', 'test/a.test.ts']);
});

test('a type-aware result is not carried when what it read changed: an unchanged file calling a function that became async fails the lint', () => {
  const changed = checkout('changed', ASYNC_B);
  expect(run(changed, script, ['restore', saved]).status).toBe(0);
  const result = lint(changed);
  expect(result.status).toBe(1);
  expect(result.stdout).toMatch(/lambda\/a\.ts[\s\S]*no-floating-promises/);
  // The files without type-aware rules keep their results.
  expect(result.skipped.sort()).toEqual(['eslint.config.js', 'test/a.test.ts']);
});
