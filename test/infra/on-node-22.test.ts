/**
 * `npm start` and `npm run bench` need Node 22 (package.json "engines"). Run with an older Node
 * they re-run themselves on Node 22 (scripts/on-node-22.sh, as scripts/test-all.sh does) instead
 * of starting silently and crashing later (`ERR_UNKNOWN_FILE_EXTENSION ".ts"` from the bench).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
/** The machine's own Node, not the one the test runs on. */
const OLD_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  if (!existsSync(path)) return false;
  const major = Number(spawnSync(path, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout);
  return major < 22;
});

const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** Runs a command line through the guard with the old Node first on PATH. */
function onOldNode(line: string, ...args: string[]) {
  const bin = mkdtempSync(join(tmpdir(), 'old-node-'));
  symlinkSync(OLD_NODE!, join(bin, 'node'));
  return spawnSync('sh', ['scripts/on-node-22.sh', line, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
}

(OLD_NODE ? describe : describe.skip)('on a Node older than 22', () => {
  it('npm start and npm run bench run their command line through the guard', () => {
    expect(scripts.start).toMatch(/^sh scripts\/on-node-22\.sh '.*dist\/local\/server\.mjs'$/);
    expect(scripts.bench).toMatch(/^sh scripts\/on-node-22\.sh '.*bench\/run\.ts'$/);
  });

  it('the guard says so in one line and runs the command on Node 22, with the arguments npm passes', () => {
    const run = onOldNode(
      'node -e "console.log(process.versions.node, process.argv.slice(1).join(\' \'))" --',
      '--new-token',
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/^Node v\d+\.\d+\.\d+ is older than 22: running on Node 22 \(npx -p node@22\)$/m);
    const [version, args] = run.stdout.trim().split(' ');
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(22);
    expect(args).toBe('--new-token');
  });

  it('runs TypeScript the way the bench does (tsx), which Node 20 could not', () => {
    const run = onOldNode("node scripts/build.mjs >/dev/null && exec tsx -e 'const n: number = 22; console.log(n)'");
    expect(run.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
    expect(run.stdout.trim()).toBe('22');
  });
});
