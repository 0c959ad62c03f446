// Bundles the dashboard (lambda/dashboard) into three in-memory assets: index.html, app.js, app.css.
// scripts/build.mjs embeds them in the Lambda bundle; nothing is fetched from a CDN at run time.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dashboard = join(root, 'lambda', 'dashboard');

/** A short content hash: index.html asks for `app.js?v=<hash>`, so the assets can be cached for a year. */
function contentHash(text) {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/**
 * @param {{ minify?: boolean }} [options]
 * @returns {Promise<{ 'index.html': string, 'app.js': string, 'app.css': string }>}
 */
export async function buildDashboard({ minify = true } = {}) {
  const result = await build({
    entryPoints: [
      { in: join(dashboard, 'src', 'main.tsx'), out: 'app' },
      { in: join(dashboard, 'src', 'styles', 'app.css'), out: 'app' },
    ],
    outdir: join(root, 'dist', 'dashboard'),
    write: false,
    bundle: true,
    minify,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': minify ? '"production"' : '"development"' },
  });

  const output = (extension) => {
    const file = result.outputFiles.find((f) => f.path.endsWith(`app.${extension}`));
    if (!file) throw new Error(`dashboard build produced no app.${extension}`);
    return file.text;
  };
  const js = output('js');
  const css = output('css');
  const template = await readFile(join(dashboard, 'index.html'), 'utf8');
  const html = template.replace('%JS_HASH%', contentHash(js)).replace('%CSS_HASH%', contentHash(css));
  return { 'index.html': html, 'app.js': js, 'app.css': css };
}

// `node scripts/build-dashboard.mjs` prints the sizes, to keep an eye on the bundle.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { gzipSync } = await import('node:zlib');
  const assets = await buildDashboard();
  for (const [name, text] of Object.entries(assets)) {
    const bytes = Buffer.byteLength(text);
    console.log(
      `${name.padEnd(10)} ${(bytes / 1024).toFixed(1).padStart(6)} KB  gzip ${(gzipSync(text).length / 1024).toFixed(1).padStart(5)} KB`,
    );
  }
}
