/**
 * What a user meets when installing: `npm ci` accepts the lock file as it stands, on this machine and
 * for the other platforms a developer uses (npm's own answer, from a dry run in a fresh folder), with
 * each native package's build for that platform; it prints no EBADENGINE on the Node version
 * package.json names, and no list of skipped install scripts.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import semver from 'semver';
import { PROJECT_ROOT } from './support/synth';

const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { version?: string; dev?: boolean; hasInstallScript?: boolean }>;
};

/** The files a folder's own install scripts run (`preinstall`: `node scripts/check-node.mjs`), which npm ci runs in a dry run too. */
function installScriptFiles(folder: string): string[] {
  const { scripts = {} } = JSON.parse(read(path.join(folder, 'package.json'))) as { scripts?: Record<string, string> };
  return ['preinstall', 'install', 'postinstall', 'prepare'].flatMap((hook) =>
    [...(scripts[hook] ?? '').matchAll(/\b(scripts\/[\w./-]+)/g)].map((m) => m[1]!),
  );
}

/** `npm ci --dry-run` in a fresh folder holding only these files: its exit status, what it adds and what it warns (at npm's default log level). */
async function dryRun(
  folder: string,
  extra: string[] = [],
): Promise<{ status: number | null; stderr: string; added: string[] }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-usage-proxy-ci-'));
  try {
    for (const file of ['package.json', 'package-lock.json', ...installScriptFiles(folder)]) {
      fs.mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
      fs.copyFileSync(path.join(PROJECT_ROOT, folder, file), path.join(scratch, file));
    }
    const child = spawn('npm', ['ci', '--dry-run', '--no-audit', '--no-fund', ...extra], { cwd: scratch });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const added = [...stdout.matchAll(/^add (\S+) /gm)].map((m) => m[1]!);
    return { status, stderr, added };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The packages whose install scripts would fetch or build a native binary: each ships per-platform builds instead. */
const NATIVE = Object.keys(manifest.allowScripts).filter((name) => name !== '@portkey-ai/gateway');

// The dry runs are npm's own processes and independent of each other: they run at once.
describe('npm ci on the project', () => {
  it.concurrent('accepts the lock as it stands, without EBADENGINE or a list of skipped install scripts', async () => {
    const run = await dryRun('.');
    expect({ status: run.status, error: /npm error.*/.exec(run.stderr)?.[0] }).toEqual({ status: 0, error: undefined });
    if (semver.satisfies(process.version, manifest.engines.node)) expect(run.stderr).not.toContain('EBADENGINE');
    // npm 11 warns about every dependency with install scripts that allowScripts does not name.
    expect(run.stderr).not.toContain('install-scripts');
  });

  it.concurrent.each([
    ['darwin', 'arm64'],
    ['win32', 'x64'],
    ['linux', 'arm64'],
  ])('installs on %s-%s, with that platform’s build of every native package', async (platform, arch) => {
    const run = await dryRun('.', [`--os=${platform}`, `--cpu=${arch}`]);
    expect(run.status).toBe(0);
    const withoutBuild = NATIVE.filter((name) => {
      const base = name.split('/').at(-1)!.split('-').at(-1)!;
      return !run.added.some((added) => added.includes(base) && added.includes(`${platform}-${arch}`));
    });
    expect(withoutBuild).toEqual([]);
  });

  it('denies every dependency install script by name, and the one that is not a native build has nothing to do', () => {
    const scripted = Object.keys(lock.packages)
      .filter((where) => where && lock.packages[where]!.hasInstallScript)
      .map((where) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(Object.keys(manifest.allowScripts).sort()).toEqual([...new Set(scripted)].sort());
    expect(Object.values(manifest.allowScripts).every((allowed) => allowed === false)).toBe(true);
    // Portkey's gateway (the benchmark's contender) runs patch-package; the installed package holds no patches.
    expect(fs.existsSync(path.join(PROJECT_ROOT, 'node_modules/@portkey-ai/gateway/package.json'))).toBe(true);
    expect(fs.existsSync(path.join(PROJECT_ROOT, 'node_modules/@portkey-ai/gateway/patches'))).toBe(false);
  });

  it('ships one AWS SDK: each @aws-sdk and @smithy package the runtime uses is installed once', () => {
    const sdk = /(?:^|\/)node_modules\/(@(?:aws-sdk|smithy)\/[^/]+)$/;
    const versions = new Map<string, Set<string>>();
    for (const [where, entry] of Object.entries(lock.packages)) {
      const name = sdk.exec(where)?.[1];
      if (!name || entry.dev) continue;
      versions.set(name, new Set([...(versions.get(name) ?? []), entry.version!]));
    }
    expect(versions.get('@aws-sdk/core')?.size).toBe(1);
    expect([...versions].filter(([, found]) => found.size > 1).map(([name]) => name)).toEqual([]);
  });
});

describe("test/infra/lambda-ric (AWS's Lambda runtime interface client, for the Lambda runtime test)", () => {
  it.concurrent('is not a dependency of the project, pins one exact version, and npm ci accepts its lock', async () => {
    expect(Object.keys(lock.packages).filter((where) => where.endsWith('node_modules/aws-lambda-ric'))).toEqual([]);
    const ric = JSON.parse(read('test/infra/lambda-ric/package.json')) as { dependencies: Record<string, string> };
    const pinned = ric.dependencies['aws-lambda-ric']!;
    expect(semver.valid(pinned)).toBe(pinned);
    const run = await dryRun('test/infra/lambda-ric');
    expect(run.status).toBe(0);
    expect(run.added).toContain('aws-lambda-ric');
  });
});
