/**
 * The tables in the docs that mirror code, rendered from it: the provider catalogue (docs/providers.md,
 * lambda/providers/catalog.ts), the README's SDK table and docs/api.md's endpoint table (the catalogue
 * and its routes), what the cache key leaves out (docs/caching.md, lambda/cache/cache-key.ts) and the
 * settings (docs/operations.md, lambda/wiring/config-variables.ts). `npm run docs:tables` writes each
 * between its page's `<!-- generated:NAME:start/end -->` markers; test/unit/doc-tables.test.ts fails
 * when a page and its source disagree. (docs/deploy.md's blocks need a synthesized stack:
 * scripts/deploy-docs.ts.)
 */
import { IGNORED_FIELDS, IGNORED_HEADERS, headerIgnoredBecause, type CacheKind } from '../lambda/cache/cache-key';
import { loadConfig } from '../lambda/wiring/config';
import { CONFIG_VARIABLES } from '../lambda/wiring/config-variables';
import { PROVIDER_CATALOG, type CatalogEntry } from '../lambda/providers/catalog';
import { providerById, upstreamUrl } from '../lambda/providers/registry';
import type { EndpointKind } from '../lambda/providers/types';

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
    note: 'the model is keyed from the path; `inferenceConfig` stays keyed: its stop sequences shape the answer',
  },
  invoke: { label: 'Bedrock InvokeModel', note: 'the model is keyed from the path' },
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

/** The headers left out of the key, those that share a reason on one row. */
function ignoredHeadersTable(): string {
  const byReason = new Map<string, string[]>();
  for (const name of Object.keys(IGNORED_HEADERS)) {
    const reason = headerIgnoredBecause(name)!;
    byReason.set(reason, [...(byReason.get(reason) ?? []), code(name)]);
  }
  return table(
    ['Headers', 'Why they cannot change the answer'],
    [...byReason].map(([reason, names]) => [names.join(', '), reason]),
  );
}

/** The settings, one line each: the variables, their default, what they mean. */
function configurationTable(): string {
  return CONFIG_VARIABLES.map((v) => `- ${v.names.map(code).join(', ')} (default ${v.default}): ${v.meaning}`).join(
    '\n',
  );
}

const CATALOG: readonly CatalogEntry[] = PROVIDER_CATALOG;

/** A provider's letter: its place in the catalogue (A: the first), as the README and docs/api.md name them. */
const letterOf = (entry: CatalogEntry) => String.fromCharCode(65 + CATALOG.indexOf(entry));

/** Letters in catalogue order, three or more in a row written as a range: `A–E`, `B, E`, `A, F`. */
function letters(entries: readonly CatalogEntry[]): string {
  const places = entries.map((entry) => CATALOG.indexOf(entry)).sort((a, b) => a - b);
  const runs: number[][] = [];
  for (const place of places) {
    const run = runs.at(-1);
    if (run && run.at(-1) === place - 1) run.push(place);
    else runs.push([place]);
  }
  const letter = (place: number) => String.fromCharCode(65 + place);
  return runs
    .flatMap((run) => (run.length >= 3 ? [`${letter(run[0]!)}–${letter(run.at(-1)!)}`] : run.map(letter)))
    .join(', ');
}

/** The package a user installs for each dialect's official SDK. */
const SDK_PACKAGE: Record<CatalogEntry['dialect'], string> = {
  messages: '@anthropic-ai/sdk',
  chat: 'openai',
  'bedrock-runtime': '@aws-sdk/client-bedrock-runtime',
};

/** What a reader needs beside a provider's base URL in the README. */
const BASE_URL_NOTE: Partial<Record<string, string>> = {
  'prov-a': ' (SDK adds `/v1/messages`)',
  'prov-b': ' (or `…/prov-b`)',
  bedrock: ' (as `endpoint`; [docs/bedrock.md](docs/bedrock.md))',
};

/** The README's table: one row per provider, with the client to install, its base URL and what the proxy calls. */
function sdkTable(): string {
  const upstreams = loadConfig({}).upstreams;
  return table(
    ['Provider', 'Client', '`baseURL`', 'Proxy calls upstream'],
    PROVIDER_CATALOG.map((entry) => [
      `${letterOf(entry)}: ${entry.displayName}`,
      code(SDK_PACKAGE[entry.dialect]),
      code(`{base}/api/proxy${entry.sdkBasePath}`) + (BASE_URL_NOTE[entry.id] ?? ''),
      // A path template's `{model}` is shown as written.
      code(decodeURI(upstreamUrl(providerById(entry.id)!, upstreams[entry.id]!.baseUrl).href)),
    ]),
  );
}

/** Each endpoint kind's paths and what its row records; the providers that offer it come from the catalogue. */
const ENDPOINT_ROWS: Record<EndpointKind, { path: string; row: string }> = {
  messages: {
    path: '`POST /v1/messages`',
    row: 'from `usage` (stream: `message_start` + `message_delta`)',
  },
  chat: { path: '`POST /prov-x/v1/chat/completions`', row: 'from `usage`' },
  responses: {
    path: '`POST /prov-x/v1/responses`',
    row: 'from `usage` (stream: `response.completed`, `.incomplete` or `.failed`); `input_tokens_details.cached_tokens` at the cache-read rate',
  },
  embeddings: {
    path: '`POST /prov-x/v1/embeddings`',
    row: "`input_tokens` = `usage.prompt_tokens`, output 0, priced at the embedding model's rate",
  },
  count_tokens: {
    path: '`POST /v1/messages/count_tokens` (A), `POST /bedrock/model/{modelId}/count-tokens` (F)',
    row: 'free: 0 tokens, cost 0',
  },
  models: { path: '`GET /v1/models` (A), `GET /prov-x/v1/models` (B–E)', row: 'free: 0 tokens, cost 0' },
  converse: {
    path: '`POST /bedrock/model/{modelId}/converse` and `/converse-stream`',
    row: '[bedrock.md](bedrock.md#endpoints)',
  },
  invoke: {
    path: '`POST /bedrock/model/{modelId}/invoke` and `/invoke-with-response-stream`',
    row: '[bedrock.md](bedrock.md#endpoints)',
  },
  other: {
    path: 'any method, any other path below `/prov-x/` (A: below `/prov-a/` or `/v1/`); not Bedrock ([bedrock.md](bedrock.md#endpoints))',
    row: "from a JSON answer's `usage` in the provider's own shape; otherwise 0 tokens, `priced: false`",
  },
};

/** Does the provider forward paths that are none of its endpoints (as kind `other`)? */
const forwardsOthers = (entry: CatalogEntry) =>
  providerById(entry.id)!.mounts.some((mount) => !mount.endpointsOnly && !mount.othersRefused);

/** docs/api.md's table: each endpoint kind, its paths, the providers that offer it and what its row records. */
function endpointsTable(): string {
  return table(
    ['`kind`', 'Method and path', 'Providers', 'Row'],
    (Object.keys(ENDPOINT_ROWS) as EndpointKind[]).map((kind) => {
      const offeredBy = CATALOG.filter((entry) =>
        kind === 'other' ? forwardsOthers(entry) : providerById(entry.id)!.endpoints.some((e) => e.kind === kind),
      );
      return [code(kind), ENDPOINT_ROWS[kind].path, letters(offeredBy), ENDPOINT_ROWS[kind].row];
    }),
  );
}

/** Every generated block, by page (from the repository's root) and marker name. */
export function renderDocTables(): Record<string, Record<string, string>> {
  return {
    'README.md': { 'sdk-clients': sdkTable() },
    'docs/api.md': { endpoints: endpointsTable() },
    'docs/providers.md': { catalog: catalogTable() },
    'docs/caching.md': { 'ignored-fields': ignoredFieldsTable(), 'ignored-headers': ignoredHeadersTable() },
    'docs/operations.md': { configuration: configurationTable() },
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
