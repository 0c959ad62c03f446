import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT, cdkJson } from './support/synth';

/**
 * The real CLI, as CI runs it: offline, no notices, no telemetry, and no Docker. A `docker` on
 * PATH that only leaves a marker proves bundling never reached for it.
 */
describe('npx cdk synth', () => {
  let scratch: string;
  let result: ReturnType<typeof spawnSync>;
  const outdir = () => path.join(scratch, 'cdk.out');
  const dockerMarker = () => path.join(scratch, 'docker-was-called');

  beforeAll(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-usage-proxy-synth-'));
    const fakeBin = path.join(scratch, 'bin');
    fs.mkdirSync(fakeBin);
    fs.writeFileSync(path.join(fakeBin, 'docker'), `#!/bin/sh\ntouch "${dockerMarker()}"\nexit 1\n`, { mode: 0o755 });
    result = spawnSync(path.join(PROJECT_ROOT, 'node_modules/.bin/cdk'), ['synth', '--output', outdir(), '--quiet'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 170_000,
      env: { ...process.env, CI: 'true', PATH: `${fakeBin}${path.delimiter}${process.env.PATH ?? ''}` },
    });
  }, 180_000);
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('exits 0 and writes the template', () => {
    expect({ status: result.status, stderr: result.status === 0 ? '' : result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(fs.existsSync(path.join(outdir(), 'dev-ai-usage-proxy.template.json'))).toBe(true);
  });

  it('bundles with local esbuild, never Docker', () => {
    expect(fs.existsSync(dockerMarker())).toBe(false);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/docker/i);
  });

  it('passes cdk-nag, which bin/app.ts registers as a synth-time validation', () => {
    const report = JSON.parse(fs.readFileSync(path.join(outdir(), 'validation-report.json'), 'utf8')) as { pluginReports: { violations: unknown[] }[] };
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });

  it('is configured for offline runs: app through the local binary, no notices, no telemetry', () => {
    const config = cdkJson();
    expect(config.app).toBe('node_modules/.bin/tsx bin/app.ts');
    expect(config.notices).toBe(false);
    expect(config.context['cli-telemetry']).toBe(false);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/NOTICES|telemetry/i);
  });
});
