import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import semver from 'semver';
import { PROJECT_ROOT } from './support/synth';

/**
 * `npm ci` installs exactly the lock file and refuses one that is out of step with package.json —
 * which includes any optional dependency (a native package's build for another platform) missing
 * from it. A lock written on one Linux machine must still install on a Mac or an arm64 laptop, and
 * a plain install on the Node version the README names must print no EBADENGINE.
 */
interface LockEntry {
  version?: string;
  dev?: boolean;
  os?: string[];
  cpu?: string[];
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  hasInstallScript?: boolean;
}
const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockEntry> };
const manifest = JSON.parse(read('package.json')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};

/** Node's resolution walk: the nearest node_modules folder above the dependent that holds `name`. */
function resolveInLock(from: string, name: string): LockEntry | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return lock.packages[candidate];
    if (!dir) return undefined;
    const at = dir.lastIndexOf('node_modules/');
    dir = at <= 0 ? '' : dir.slice(0, at - 1);
  }
}

const PLATFORMS = ['linux', 'darwin', 'win32'].flatMap((platform) =>
  ['x64', 'arm64'].map((arch) => ({ platform, arch })),
);
const runsOnSomePlatform = (e: LockEntry) =>
  PLATFORMS.some(({ platform, arch }) => (!e.os || e.os.includes(platform)) && (!e.cpu || e.cpu.includes(arch)));

/** The package a lock path installs: `node_modules/a/node_modules/@b/c` installs `@b/c`. */
const packageName = (where: string) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** The per-platform builds among an entry's optional dependencies (those limited to an OS or CPU). */
const platformBuilds = (where: string, e: LockEntry) =>
  Object.keys(e.optionalDependencies ?? {})
    .map((dep) => resolveInLock(where, dep))
    .filter((b) => b?.os || b?.cpu);

/** Whether npm would install this entry on one of PLATFORMS: it runs there and something installed needs it. */
function installable(where: string, seen = new Set<string>()): boolean {
  if (!where) return true;
  const entry = lock.packages[where];
  if (!entry || !runsOnSomePlatform(entry) || seen.has(where)) return false;
  seen.add(where);
  const name = packageName(where);
  return Object.entries(lock.packages).some(
    ([dependent, e]) =>
      (e.dependencies?.[name] || e.optionalDependencies?.[name]) &&
      resolveInLock(dependent, name) === entry &&
      installable(dependent, seen),
  );
}

describe('package-lock.json', () => {
  it('carries every optional dependency of every package (npm ci checks exactly this)', () => {
    const missing: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolveInLock(where, name)) missing.push(`${where || '(root)'} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(PLATFORMS)(
    'has a build for $platform-$arch of every package shipped as per-platform binaries',
    ({ platform, arch }) => {
      // A family of per-platform builds (esbuild, swc, jest's resolver), not a single macOS-only extra like fsevents.
      const native = Object.entries(lock.packages).filter(([where, e]) => platformBuilds(where, e).length > 1);
      expect(native.map(([where]) => where)).toEqual(
        expect.arrayContaining(['node_modules/@swc/core', 'node_modules/esbuild']),
      );
      const without = native
        .filter(
          ([where, e]) =>
            !platformBuilds(where, e).some(
              (b) => (!b!.os || b!.os.includes(platform)) && (!b!.cpu || b!.cpu.includes(arch)),
            ),
        )
        .map(([where]) => where);
      expect(without).toEqual([]);
    },
  );

  it('says for every package with an install script that it does not run (allowScripts), and none is needed', () => {
    const scripted = Object.entries(lock.packages).filter(([where, e]) => where && e.hasInstallScript);
    expect(Object.keys(manifest.allowScripts).sort()).toEqual(
      [...new Set(scripted.map(([where]) => packageName(where)))].sort(),
    );
    expect(Object.values(manifest.allowScripts).every((allowed) => allowed === false)).toBe(true);
    // Their scripts fetch or build a native binary when no per-platform build is installed; the lock
    // carries those builds for every platform (above). Portkey's gateway, the benchmark's contender,
    // runs patch-package, and the installed package holds no patches to apply.
    const installed = (where: string, file: string) => fs.existsSync(path.join(PROJECT_ROOT, where, file));
    const needed = scripted
      .filter(([where, e]) =>
        packageName(where) === '@portkey-ai/gateway'
          ? !installed(where, 'package.json') || installed(where, 'patches')
          : platformBuilds(where, e).length < 2,
      )
      .map(([where]) => where);
    expect(needed).toEqual([]);
  });

  it('holds no package that needs a newer Node than package.json engines allows (no EBADENGINE)', () => {
    const oldest = semver.minVersion(manifest.engines.node)!.version;
    const tooNew = Object.entries(lock.packages)
      .filter(
        ([where, e]) => where && e.engines?.node && !semver.satisfies(oldest, e.engines.node) && installable(where),
      )
      .map(([where, e]) => `${where}@${e.version} needs node ${e.engines!.node}`);
    expect(tooNew).toEqual([]);
  });

  it('ships one AWS SDK: each @aws-sdk and @smithy package the runtime uses is installed once, at the version package.json pins', () => {
    // AWS numbers each package on its own (the clients 3.11xx, @aws-sdk/util-dynamodb 3.996.x); one line means one copy of each.
    const sdk = /(?:^|\/)node_modules\/(@(?:aws-sdk|smithy)\/[^/]+)$/;
    const versions = new Map<string, Set<string>>();
    for (const [where, entry] of Object.entries(lock.packages)) {
      const name = sdk.exec(where)?.[1];
      if (!name || entry.dev) continue;
      versions.set(name, new Set([...(versions.get(name) ?? []), entry.version!]));
    }
    expect(versions.get('@aws-sdk/core')?.size).toBe(1);
    expect(
      [...versions].filter(([, found]) => found.size > 1).map(([name, found]) => `${name}: ${[...found].join(', ')}`),
    ).toEqual([]);
    const pinned = Object.entries(manifest.dependencies).filter(([name]) => sdk.test(`node_modules/${name}`));
    expect(pinned.map(([name, version]) => [name, version])).toEqual(
      pinned.map(([name]) => [name, lock.packages[`node_modules/${name}`]?.version]),
    );
  });

  it('names the same Node version in the README as in engines, and the suite runs on it', () => {
    const major = semver.minVersion(manifest.engines.node)!.major;
    expect(read('README.md')).toContain(`Node.js ${major} or newer`);
    expect(read('scripts/test-all.sh')).toContain(`-lt ${major} ]`);
    expect(read('scripts/test-all.sh')).toMatch(/^phase "npm ci" npm ci /m);
  });

  it('is accepted by npm ci as it stands (a dry run in a fresh folder)', () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-usage-proxy-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json'])
        fs.copyFileSync(path.join(PROJECT_ROOT, file), path.join(scratch, file));
      const run = spawnSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], {
        cwd: scratch,
        encoding: 'utf8',
        timeout: 110_000,
      });
      expect({ status: run.status, error: /npm error.*/.exec(run.stderr)?.[0] }).toEqual({
        status: 0,
        error: undefined,
      });
      if (semver.satisfies(process.version, manifest.engines.node)) expect(run.stderr).not.toContain('EBADENGINE');
      // npm 11 warns about every dependency with install scripts that allowScripts does not name.
      expect(run.stderr).not.toContain('install-scripts');
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe("test/infra/lambda-ric (AWS's Lambda runtime interface client, for the Lambda runtime test)", () => {
  const folder = 'test/infra/lambda-ric';
  const ricManifest = JSON.parse(read(`${folder}/package.json`)) as { dependencies: Record<string, string> };
  const ricLock = JSON.parse(read(`${folder}/package-lock.json`)) as { packages: Record<string, LockEntry> };

  it('is not a dependency of the project: `npm install` compiles nothing for it', () => {
    expect(Object.keys(lock.packages).filter((where) => where.endsWith('node_modules/aws-lambda-ric'))).toEqual([]);
  });

  it('pins one exact version, the one its lock installs, and npm ci accepts the lock (dry run)', () => {
    const pinned = ricManifest.dependencies['aws-lambda-ric'];
    expect(semver.valid(pinned)).toBe(pinned);
    expect(ricLock.packages['node_modules/aws-lambda-ric']?.version).toBe(pinned);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-usage-proxy-ric-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json'])
        fs.copyFileSync(path.join(PROJECT_ROOT, folder, file), path.join(scratch, file));
      const run = spawnSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], {
        cwd: scratch,
        encoding: 'utf8',
        timeout: 110_000,
      });
      expect({ status: run.status, error: /npm error.*/.exec(run.stderr)?.[0] }).toEqual({
        status: 0,
        error: undefined,
      });
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
