/** `npm run docs:tables`: rewrites the generated tables of the docs from the code they mirror (scripts/doc-tables.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderDocTables, withBlocks } from './doc-tables';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [page, blocks] of Object.entries(renderDocTables())) {
  const path = join(root, page);
  writeFileSync(path, withBlocks(readFileSync(path, 'utf8'), blocks));
  process.stdout.write(`${page}: ${Object.keys(blocks).join(', ')} rewritten\n`);
}
