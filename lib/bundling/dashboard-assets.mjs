// Writes the `virtual:dashboard-assets` module to a file, for esbuild runs that can't use
// scripts/build.mjs's plugin (the CDK's NodejsFunction runs the esbuild CLI). Same build, same assets.
// Usage: node lib/bundling/dashboard-assets.mjs <output file>
import { writeFileSync } from 'node:fs';
import { buildDashboard } from '../../scripts/build-dashboard.mjs';

const [outFile] = process.argv.slice(2);
if (!outFile) {
  console.error('usage: node lib/bundling/dashboard-assets.mjs <output file>');
  process.exit(2);
}
const assets = await buildDashboard({ minify: true });
writeFileSync(outFile, `export default ${JSON.stringify(assets)};\n`);
