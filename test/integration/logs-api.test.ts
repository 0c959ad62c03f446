/**
 * The log endpoints beyond the list: one row by id, the model-prefix and token filters,
 * the CSV export, and per-token figures in /api/stats — through the real local server.
 */
import { csvRows } from '../support/csv';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, TEST_MODELS } from '../support/sdk-clients';

let proxy: ProxyServer;
let token: string;
let appToken: { token: string; token_id: string };
const ids: string[] = [];
let failedId: string;

type Row = Record<string, unknown>;

async function json<T = Row>(path: string, as = token): Promise<{ status: number; body: T }> {
  const response = await proxy.api(path, { token: as });
  return { status: response.status, body: (await response.json()) as T };
}

beforeAll(async () => {
  proxy = await startProxy();
  token = proxy.account.token;
  appToken = (await (await proxy.api('/api/tokens', { token, body: { name: 'support-bot' } })).json()) as {
    token: string;
    token_id: string;
  };
  proxy.secrets.add(appToken.token);
  const base = { proxyBase: proxy.proxyBase, token };
  ids.push(
    (await callThroughSdk({ ...base, provider: 'prov-b', stream: false, headers: { 'x-proxy-user': 'alice, "ops"' } }))
      .requestId,
  );
  ids.push((await callThroughSdk({ ...base, provider: 'prov-a', stream: true })).requestId);
  ids.push(
    (
      await callThroughSdk({
        ...base,
        token: appToken.token,
        provider: 'prov-b',
        stream: true,
        headers: { 'x-proxy-user': '=cmd' },
      })
    ).requestId,
  );
  ids.push((await callThroughSdk({ ...base, token: appToken.token, provider: 'prov-c', stream: false })).requestId);
  proxy.fakes.fakes['prov-d'].next({ status: 400, errorMessage: 'Invalid model, "quoted",\nand on two lines' });
  const failed = await callThroughSdk({ ...base, provider: 'prov-d', stream: false }).catch((e) => e);
  failedId = failed.headers.get('x-proxy-request-id');
  ids.push(failedId);
  await proxy.rowsFor(token, ids);
  // Stats come from rollups folded from the usage stream a moment after the rows.
  await proxy.waitForRows(token, ids.length);
});

afterAll(async () => {
  await proxy.stop();
});

describe('GET /api/logs/:id', () => {
  it('answers the same row as the list, every field, for the x-proxy-request-id', async () => {
    const list = await json<{ items: Row[] }>('/api/logs?limit=50');
    for (const id of ids) {
      const one = await json(`/api/logs/${id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(list.body.items.find((r) => r.id === id));
    }
    const failed = await json(`/api/logs/${failedId}`);
    expect(failed.body).toMatchObject({
      status_code: 400,
      error: expect.stringContaining('on two lines'),
      provider: 'prov-d',
    });
    expect(failed.body).not.toHaveProperty('account_id');
  });

  it('is a 404 for another account, an unknown id, and a malformed id', async () => {
    const other = await proxy.createAccount('logs-other');
    const cases = [
      [ids[0], other.token],
      [`${ids[0].slice(0, 10)}0000000000000000`, token],
      ['not-an-id', token],
      ['../stats', token],
    ] as const;
    for (const [id, as] of cases) {
      const answer = await json<{ error: { message: string } }>(`/api/logs/${encodeURIComponent(id)}`, as);
      expect([id, answer.status]).toEqual([id, 404]);
      expect(answer.body.error.message).toContain('No request');
    }
  });
});

describe('GET /api/logs filters', () => {
  const idsOf = async (query: string) =>
    (await json<{ items: Row[] }>(`/api/logs?${query}`)).body.items.map((r) => r.id).sort();

  it('matches the model by prefix, not by substring', async () => {
    expect(TEST_MODELS['prov-b']).toBe('gpt-4o-mini-2024-07-18');
    const prefixed = [ids[0], ids[2]].sort();
    expect(await idsOf('model=gpt-4o-mini')).toEqual(prefixed);
    expect(await idsOf('model=gpt-4o-mini-2024-07-18')).toEqual(prefixed);
    expect(await idsOf('model=gpt')).toEqual(prefixed);
    expect(await idsOf('model=4o-mini')).toEqual([]);
    expect(await idsOf('model=gpt-4o-mini-2024-07-180')).toEqual([]);
  });

  it('filters by token and by date range', async () => {
    expect(await idsOf(`token_id=${appToken.token_id}`)).toEqual([ids[2], ids[3]].sort());
    expect(await idsOf(`token_id=${proxy.account.tokenId}`)).toEqual([ids[0], ids[1], ids[4]].sort());
    const rows = (await json<{ items: Row[] }>('/api/logs')).body.items;
    const second = rows.find((r) => r.id === ids[1])!.ts as string;
    const fourth = rows.find((r) => r.id === ids[3])!.ts as string;
    expect(await idsOf(`from=${second}&to=${fourth}`)).toEqual([ids[1], ids[2], ids[3]].sort());
    expect(await idsOf(`from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`)).toEqual([]);
  });
});

describe('GET /api/logs.csv', () => {
  async function csv(query = '', as = token) {
    const response = await proxy.api(`/api/logs.csv${query}`, { token: as });
    return { response, text: await response.text() };
  }

  it('streams every matching row as CSV, equal to /api/logs, with the documented columns', async () => {
    const { response, text } = await csv();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toContain('attachment');
    const [header, ...lines] = csvRows(text);
    expect(header).toEqual([
      'id',
      'ts',
      'provider',
      'kind',
      'model',
      'mode',
      'token_id',
      'requester',
      'input_tokens',
      'output_tokens',
      'cache_read_tokens',
      'cache_write_tokens',
      'cost_usd',
      'priced',
      'price_source',
      'saved_usd',
      'latency_ms',
      'status_code',
      'stream',
      'cached',
      'error',
      'tags',
      'server_tool_use',
      'usage_estimated',
      'priced_as',
      'key_label',
      'key_hint',
    ]);
    const items = (await json<{ items: Row[] }>('/api/logs?limit=500')).body.items;
    expect(lines).toHaveLength(items.length);
    lines.forEach((line, i) => {
      const row = items[i];
      const cells = Object.fromEntries(header.map((name, j) => [name, line[j]]));
      for (const name of ['id', 'ts', 'provider', 'kind', 'model', 'mode', 'token_id'])
        expect(cells[name]).toBe(row[name]);
      for (const name of [
        'input_tokens',
        'output_tokens',
        'cache_read_tokens',
        'cache_write_tokens',
        'latency_ms',
        'status_code',
        'cost_usd',
        'saved_usd',
      ]) {
        expect([name, Number(cells[name])]).toEqual([name, row[name]]);
      }
      for (const name of ['priced', 'stream', 'cached']) expect([name, cells[name]]).toEqual([name, String(row[name])]);
      expect(cells.error).toBe(row.error ?? '');
      expect(cells.price_source).toBe(row.price_source ?? '');
      // A label a spreadsheet would run as a formula is written with a leading apostrophe.
      expect(cells.requester).toBe(row.requester === '=cmd' ? "'=cmd" : (row.requester ?? ''));
    });
    expect(text).toContain('"alice, ""ops"""');
    expect(text).toContain('"Invalid model, ""quoted"",\nand on two lines"');
  });

  it('applies the same filters as /api/logs and shows another account nothing', async () => {
    const { text } = await csv(`?model=gpt-4o-mini&token_id=${appToken.token_id}`);
    expect(
      csvRows(text)
        .slice(1)
        .map((line) => line[0]),
    ).toEqual([ids[2]]);
    expect(
      csvRows((await csv('?kind=messages')).text)
        .slice(1)
        .map((line) => line[0]),
    ).toEqual([ids[1]]);
    const other = await proxy.createAccount('csv-other');
    expect(csvRows((await csv('', other.token)).text)).toHaveLength(1);
    expect((await csv('?status=maybe')).response.status).toBe(400);
    expect((await csv('', 'sk-proxy-wrong')).response.status).toBe(401);
  });
});

describe('per-token usage in GET /api/stats', () => {
  it('adds by_token with each token’s name, equal to the sums of its rows', async () => {
    const rows = (await json<{ items: Row[] }>('/api/logs?limit=500')).body.items;
    const now = Date.now();
    const { body } = await json<{ by_token: Row[] }>(
      `/api/stats?from=${new Date(now - 3_600_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}`,
    );
    const expected = [proxy.account.tokenId, appToken.token_id].map((id) => {
      const own = rows.filter((r) => r.token_id === id);
      return {
        token_id: id,
        requests: own.length,
        cost_nanos: own.reduce((sum, r) => sum + Number(r.cost_nanos), 0),
        input_tokens: own.reduce((sum, r) => sum + Number(r.input_tokens), 0),
      };
    });
    expect(
      body.by_token
        .map((t) => ({
          token_id: t.token_id,
          requests: t.requests,
          cost_nanos: t.cost_nanos,
          input_tokens: t.input_tokens,
        }))
        .sort((a, b) => String(a.token_id).localeCompare(String(b.token_id))),
    ).toEqual(expected.sort((a, b) => a.token_id.localeCompare(b.token_id)));
    expect(body.by_token.find((t) => t.token_id === appToken.token_id)?.name).toBe('support-bot');
  });

  it('answers an hourly series for a short period', async () => {
    const now = Date.now();
    const { body } = await json<{ by_hour: Row[]; totals: Row }>(
      `/api/stats?from=${new Date(now - 5 * 3_600_000).toISOString()}&to=${new Date(now).toISOString()}`,
    );
    expect(body.by_hour.length).toBeGreaterThanOrEqual(5);
    expect(body.by_hour.length).toBeLessThanOrEqual(6);
    expect(body.by_hour.reduce((sum, h) => sum + Number(h.requests), 0)).toBe(body.totals.requests);
    expect(body.totals.requests).toBe(ids.length);
  });
});
