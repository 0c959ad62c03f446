import { Readable } from 'node:stream';
import { formatTags } from '../tags/tags';
import type { LogQuery, UsageLog, UsageRow } from '../usage/usage-row';
import { csvCell, type Cell } from './csv-cell';

/** Rows fetched per store read while exporting: memory stays at one page, however long the period. */
const EXPORT_PAGE_SIZE = 500;

/** The CSV columns, in order (documented in docs/management-api.md, "CSV export"). */
export const CSV_COLUMNS: readonly { name: string; value: (row: UsageRow) => Cell }[] = [
  { name: 'id', value: (r) => r.id },
  { name: 'ts', value: (r) => r.ts },
  { name: 'provider', value: (r) => r.provider },
  { name: 'kind', value: (r) => r.kind },
  { name: 'model', value: (r) => r.model },
  { name: 'mode', value: (r) => r.mode },
  { name: 'token_id', value: (r) => r.token_id },
  { name: 'requester', value: (r) => r.requester },
  { name: 'input_tokens', value: (r) => r.input_tokens },
  { name: 'output_tokens', value: (r) => r.output_tokens },
  { name: 'cache_read_tokens', value: (r) => r.cache_read_tokens },
  { name: 'cache_write_tokens', value: (r) => r.cache_write_tokens },
  { name: 'cost_usd', value: (r) => nanosAsDecimal(r.cost_nanos) },
  { name: 'priced', value: (r) => r.priced },
  { name: 'price_source', value: (r) => r.price_source },
  { name: 'saved_usd', value: (r) => nanosAsDecimal(r.saved_nanos) },
  { name: 'latency_ms', value: (r) => r.latency_ms },
  { name: 'status_code', value: (r) => r.status_code },
  { name: 'stream', value: (r) => r.stream },
  { name: 'cached', value: (r) => r.cached },
  { name: 'error', value: (r) => r.error },
  // Last, so the columns before it keep their places; the header's own format (docs/tags.md).
  { name: 'tags', value: (r) => formatTags(r.tags) },
  // Added after `tags`, so the columns before it keep their places: `web_search_requests=3`, `;`-separated.
  { name: 'server_tool_use', value: (r) => formatCounts(r.server_tool_use) },
  { name: 'usage_estimated', value: (r) => r.usage_estimated === true },
  // Added last too: the model whose price was charged when the answer's model had none.
  { name: 'priced_as', value: (r) => r.priced_as },
  // The stored key that served (docs/fallbacks.md, "Key pools"): its label and last four characters.
  { name: 'key_label', value: (r) => r.key_label },
  { name: 'key_hint', value: (r) => r.key_hint },
];

function formatCounts(counts: Record<string, number> | undefined): string | undefined {
  const entries = Object.entries(counts ?? {});
  return entries.length ? entries.map(([name, count]) => `${name}=${count}`).join(';') : undefined;
}

/** Exact dollars from integer nanos, never in exponent form (`0.000000150`, not `1.5e-7`). */
export function nanosAsDecimal(nanos: number | undefined): string {
  const n = Math.round(nanos ?? 0);
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  const fraction = String(abs % 1e9)
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${sign}${Math.floor(abs / 1e9)}${fraction ? `.${fraction}` : ''}`;
}

export function csvLine(row: UsageRow): string {
  return `${CSV_COLUMNS.map((column) => csvCell(column.value(row))).join(',')}\r\n`;
}

/**
 * Every row matching the query, newest first, read page by page as the client takes them. The
 * first page is read before the answer starts, so a store outage is still answered with a 503
 * rather than a 200 cut short after its header line.
 */
export async function logCsvStream(
  usageLog: UsageLog,
  accountId: string,
  query: Omit<LogQuery, 'limit' | 'cursor'>,
): Promise<Readable> {
  const readPage = (cursor?: string) => usageLog.query(accountId, { ...query, limit: EXPORT_PAGE_SIZE, cursor });
  const first = await readPage();
  async function* lines(): AsyncGenerator<string> {
    yield `${CSV_COLUMNS.map((column) => column.name).join(',')}\r\n`;
    for (let page = first; ; page = await readPage(page.nextCursor)) {
      if (page.items.length) yield page.items.map(csvLine).join('');
      if (!page.nextCursor) return;
    }
  }
  return Readable.from(lines(), { objectMode: false });
}
