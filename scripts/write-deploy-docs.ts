/** `npm run docs:deploy`: rewrites docs/deploy.md's fact blocks from their sources (scripts/deploy-docs.ts). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { addProxyStack } from '../lib/proxy-app';
import { renderDeployFacts, withFacts } from './deploy-docs';

const root = fileURLToPath(new URL('..', import.meta.url));
const docPath = join(root, 'docs', 'deploy.md');
const { context } = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const outdir = mkdtempSync(join(tmpdir(), 'ai-usage-proxy-docs-'));
try {
  // The default stage, as `npx cdk synth` builds it; the code is not bundled (the facts are in the template).
  const app = new App({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  const stack = addProxyStack(app, root);
  writeFileSync(docPath, withFacts(readFileSync(docPath, 'utf8'), renderDeployFacts(stack)));
  process.stdout.write('docs/deploy.md: fact blocks rewritten\n');
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
