/** Reading usage rows back through the management API (rows are written just after a response ends). */
import type { ProxyServer } from '../../support/proxy-server';
import { eventually, EVENTUALLY_MS } from '../../support/patience';

export type Row = Record<string, unknown> & {
  id: string;
  status_code: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  cached: boolean;
  stream: boolean;
  error?: string;
};

/** Every row of the account, newest first, following `next_cursor` to the end. */
export async function allRows(proxy: Pick<ProxyServer, 'api'>, token: string, query = ''): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const params = new URLSearchParams(query);
    params.set('limit', '500');
    if (cursor) params.set('cursor', cursor);
    const response = await proxy.api(`/api/logs?${params}`, { token });
    if (response.status !== 200) throw new Error(`GET /api/logs answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { items: Row[]; next_cursor: string | null };
    rows.push(...body.items);
    cursor = body.next_cursor;
    if (!cursor) return rows;
  }
  throw new Error('GET /api/logs: more pages than any test writes');
}

/** Polls until the account has `count` rows (or the deadline passes) and returns them all. */
export async function waitForRowCount(
  proxy: Pick<ProxyServer, 'api'>,
  token: string,
  count: number,
  timeoutMs = EVENTUALLY_MS,
): Promise<Row[]> {
  const enough = await eventually(async () => {
    const rows = await allRows(proxy, token);
    return rows.length >= count ? rows : undefined;
  }, timeoutMs);
  // Out of time: what is there, for the caller's assertion to show.
  return enough ?? allRows(proxy, token);
}

/** Polls until the row with this id exists; undefined if it never appears in time. */
export async function waitForRow(
  proxy: Pick<ProxyServer, 'api'>,
  token: string,
  id: string,
  timeoutMs = EVENTUALLY_MS,
): Promise<Row | undefined> {
  return eventually(async () => {
    const response = await proxy.api('/api/logs?limit=500', { token });
    if (response.status !== 200) return undefined;
    return ((await response.json()) as { items: Row[] }).items.find((item) => item.id === id);
  }, timeoutMs);
}

/** Like waitForRow, but fails with a message naming the request. */
export async function rowOf(
  proxy: Pick<ProxyServer, 'api'>,
  token: string,
  id: string,
  timeoutMs?: number,
): Promise<Row> {
  expect(id).toBeTruthy();
  const row = await waitForRow(proxy, token, id, timeoutMs);
  if (!row) throw new Error(`no usage row for request ${id}`);
  return row;
}

export interface StatsTotals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_hits: number;
  errors: number;
}

export async function statsTotals(proxy: Pick<ProxyServer, 'api'>, token: string): Promise<StatsTotals> {
  const response = await proxy.api('/api/stats', { token });
  if (response.status !== 200) throw new Error(`GET /api/stats answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { totals?: StatsTotals } & StatsTotals;
  return body.totals ?? body;
}
