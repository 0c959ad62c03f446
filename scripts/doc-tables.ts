/**
 * The tables in docs/ that mirror code, rendered from it: the provider catalogue (docs/providers.md,
 * lambda/providers/catalog.ts), what the cache key leaves out (docs/caching.md, lambda/cache/cache-key.ts)
 * and the settings (docs/operations.md, lambda/config-variables.ts). `npm run docs:tables` writes
 * each between its page's `<!-- generated:NAME:start/end -->` markers; test/unit/doc-tables.test.ts
 * fails when a page and its source disagree. (docs/deploy.md's blocks need a synthesized stack:
 * scripts/deploy-docs.ts.)
 */
import { IGNORED_FIELDS, IGNORED_HEADERS, headerIgnoredBecause, type CacheKind } from '../lambda/cache/cache-key';
import { CONFIG_VARIABLES } from '../lambda/config-variables';
import { PROVIDER_CATALOG } from '../lambda/providers/catalog';

const code = (text: string) => `\`${text}\``;
const table = (header: string[], rows: string[][]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

function catalogTable(): string {
  return table(
    [
      '`id`',
      '`displayName`',
      '`dialect`',
      'default `upstream.baseUrl`',
      '`upstream.envVar`',
      '`sdkBasePath`',
      '`endpoints`',
      '`streamUsage`',
    ],
    PROVIDER_CATALOG.map((entry) => [
      code(entry.id),
      entry.displayName,
      code(entry.dialect),
      code(entry.upstream.baseUrl),
      code(entry.upstream.envVar),
      entry.sdkBasePath === '' ? "`''`" : code(entry.sdkBasePath),
      entry.endpoints.map(code).join(', '),
      code(entry.streamUsage),
    ]),
  );
}

/** Each endpoint kind as the page names it, and what a reader needs to know beside its list. */
const KIND_LABELS: Record<CacheKind, { label: string; note?: string }> = {
  messages: { label: 'messages (Anthropic)' },
  chat: { label: 'chat completions' },
  responses: { label: 'Responses API' },
  embeddings: { label: 'embeddings' },
  converse: {
    label: 'Bedrock Converse',
    note: 'the model is in the path, and in the key; inferenceConfig stays in the key, since its stop sequences shape the answer',
  },
  invoke: { label: 'Bedrock InvokeModel', note: 'the model is in the path, and in the key' },
};

function ignoredFieldsTable(): string {
  return table(
    ['Endpoint kind', 'Left out of the key'],
    (Object.keys(KIND_LABELS) as CacheKind[]).map((kind) => {
      const { label, note } = KIND_LABELS[kind];
      const fields = Object.keys(IGNORED_FIELDS[kind]).map(code).join(', ');
      return [label, note ? `${fields} (${note})` : fields];
    }),
  );
}

function ignoredHeadersTable(): string {
  return table(
    ['Header', 'Why it cannot change the answer'],
    Object.keys(IGNORED_HEADERS).map((name) => [code(name), headerIgnoredBecause(name)!]),
  );
}

function configurationTable(): string {
  return table(
    ['Variable', 'Default', 'Meaning'],
    CONFIG_VARIABLES.map((v) => [v.names.map(code).join(', '), v.default, v.meaning]),
  );
}

/** Every generated block, by page (under docs/) and marker name. */
export function renderDocTables(): Record<string, Record<string, string>> {
  return {
    'providers.md': { catalog: catalogTable() },
    'caching.md': { 'ignored-fields': ignoredFieldsTable(), 'ignored-headers': ignoredHeadersTable() },
    'operations.md': { configuration: configurationTable() },
  };
}

const marker = (name: string, end: 'start' | 'end') => `<!-- generated:${name}:${end} -->`;

/** The text between a block's markers; undefined when the page lacks them. */
export function blockIn(markdown: string, name: string): string | undefined {
  const from = markdown.indexOf(marker(name, 'start'));
  const to = markdown.indexOf(marker(name, 'end'));
  if (from < 0 || to < from) return undefined;
  return markdown.slice(from + marker(name, 'start').length, to).replace(/^\n|\n$/g, '');
}

/** The page with each block's text replaced by what its source renders. */
export function withBlocks(markdown: string, blocks: Record<string, string>): string {
  let out = markdown;
  for (const [name, text] of Object.entries(blocks)) {
    if (blockIn(out, name) === undefined) throw new Error(`no ${marker(name, 'start')} … ${marker(name, 'end')} block`);
    const from = out.indexOf(marker(name, 'start')) + marker(name, 'start').length;
    out = `${out.slice(0, from)}\n${text}\n${out.slice(out.indexOf(marker(name, 'end')))}`;
  }
  return out;
}
