/**
 * The tables in docs/ that mirror code are rendered from it (scripts/doc-tables.ts): each page must
 * hold exactly what its source renders today. `npm run docs:tables` rewrites them after a change.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKED_VARIABLES } from '../../lambda/wiring/config';
import { CONFIG_VARIABLES, SET_BY_THE_PLATFORM } from '../../lambda/wiring/config-variables';
import { PROVIDER_CATALOG } from '../../lambda/providers/catalog';
import { TABLES } from '../../lambda/store/tables';
import { blockIn, renderDocTables, withBlocks } from '../../scripts/doc-tables';

const page = (name: string) => readFileSync(join(__dirname, '../..', name), 'utf8');
const rendered = renderDocTables();

test.each(Object.entries(rendered).flatMap(([name, blocks]) => Object.keys(blocks).map((block) => [name, block])))(
  '%s: the %s table is what its source renders (npm run docs:tables)',
  (name, block) => {
    expect(blockIn(page(name), block)).toBe(rendered[name]![block]);
  },
);

test.each(Object.keys(rendered))('%s: rewriting its tables changes nothing, and it has no other', (name) => {
  expect(withBlocks(page(name), rendered[name]!)).toBe(page(name));
  const blocks = [...page(name).matchAll(/<!-- generated:([\w-]+):start -->/g)].map((m) => m[1]);
  expect(blocks.sort()).toEqual(Object.keys(rendered[name]!).sort());
});

test('the configuration table names every variable the proxy reads for a user to set, and no other', () => {
  const read = new Set([
    ...CHECKED_VARIABLES,
    'TABLE_PREFIX',
    ...PROVIDER_CATALOG.flatMap((entry): string[] => [
      entry.upstream.envVar,
      ...('aws' in entry.upstream ? [entry.upstream.aws.regionEnvVar] : []),
    ]),
  ]);
  const documented = CONFIG_VARIABLES.flatMap((v) => v.names);
  expect(new Set(documented).size).toBe(documented.length);
  // Each table's own name variable is the stack's to set (docs/deploy.md), like the platform's.
  const tableNames: string[] = Object.values(TABLES).map((shape) => shape.envVar);
  expect([...documented, ...SET_BY_THE_PLATFORM].sort()).toEqual(
    [...read].filter((n) => !tableNames.includes(n)).sort(),
  );
});
