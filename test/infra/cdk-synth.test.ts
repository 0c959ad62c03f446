import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT, cdkJson } from './support/synth';

/**
 * The real CLI, exactly as a newcomer runs it: `npx cdk synth` with no flags, in a fresh copy of the
 * repository (the files a clone has, with this checkout's node_modules linked in), so the output
 * goes to the default, relative `cdk.out`. Offline, no notices, no telemetry, and no Docker: a
 * `docker` on PATH that only leaves a marker proves bundling never reached for it.
 */
describe('npx cdk synth in a fresh clone', () => {
  let scratch: string;
  let clone: string;
  let result: ReturnType<typeof spawnSync>;
  const outdir = () => path.join(clone, 'cdk.out');
  const dockerMarker = () => path.join(scratch, 'docker-was-called');

  beforeAll(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-usage-proxy-synth-'));
    clone = path.join(scratch, 'ai-usage-proxy');
    copyCheckout(clone);
    const fakeBin = path.join(scratch, 'bin');
    fs.mkdirSync(fakeBin);
    fs.writeFileSync(path.join(fakeBin, 'docker'), `#!/bin/sh\ntouch "${dockerMarker()}"\nexit 1\n`, { mode: 0o755 });
    result = spawnSync('npx', ['cdk', 'synth'], {
      cwd: clone,
      encoding: 'utf8',
      timeout: 170_000,
      env: { ...process.env, CI: 'true', PATH: `${fakeBin}${path.delimiter}${process.env.PATH ?? ''}` },
    });
  }, 360_000);
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('exits 0 and writes the template', () => {
    expect({ status: result.status, stderr: result.status === 0 ? '' : result.stderr }).toEqual({
      status: 0,
      stderr: '',
    });
    expect(result.stdout).toContain('AWS::Lambda::Function');
    expect(fs.existsSync(path.join(outdir(), 'dev-ai-usage-proxy.template.json'))).toBe(true);
  });

  it('bundles with local esbuild, never Docker', () => {
    expect(fs.existsSync(dockerMarker())).toBe(false);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/docker/i);
  });

  it('passes cdk-nag, which bin/app.ts registers as a synth-time validation', () => {
    const report = JSON.parse(fs.readFileSync(path.join(outdir(), 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });

  it('is configured for offline runs: app through the local binary, no notices, no telemetry', () => {
    const config = cdkJson();
    expect(config.app).toBe('node_modules/.bin/tsx bin/app.ts');
    expect(JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts.synth).toBe(
      'cdk synth',
    );
    expect(config.notices).toBe(false);
    expect(config.context['cli-telemetry']).toBe(false);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/NOTICES|telemetry/i);
  });
});

/** The files a `git clone` of this checkout would have (tracked, plus new files not yet committed), and node_modules as a link. */
function copyCheckout(target: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    const from = path.join(PROJECT_ROOT, file);
    if (!fs.existsSync(from)) continue; // deleted in the working tree, not yet committed
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    fs.copyFileSync(from, path.join(target, file));
  }
  fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(target, 'node_modules'), 'dir');
}
