import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';
import type { ProviderId } from '../fakes/start-fakes';
import { eventually } from '../support/patience';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

type Row = Record<string, number | string | boolean>;
const sum = (rows: Row[], field: string) => rows.reduce((total, row) => total + Number(row[field] ?? 0), 0);

async function stats(token: string, query: string) {
  const response = await proxy.api(`/api/stats?${query}`, { token });
  expect(response.status).toBe(200);
  return response.json();
}

/** The rollups are folded from the usage stream about once a second after the rows: poll until they include `requests`. */
async function statsCaughtUp(token: string, query: string, requests: number) {
  const caughtUp = await eventually(async () => {
    const body = await stats(token, query);
    return body.totals.requests >= requests ? body : undefined;
  });
  // Out of time: the last answer, for the caller's assertion to show.
  return caughtUp ?? stats(token, query);
}

describe('GET /api/stats over rows written through the proxy', () => {
  const ids: string[] = [];

  beforeAll(async () => {
    proxy.fakes.reset();
    for (const fake of Object.values(proxy.fakes.fakes)) fake.always({ usage: 'random' });
    const plan: Array<[ProviderId, boolean, string]> = [
      ['prov-a', false, 'alice'],
      ['prov-a', true, 'bob'],
      ['prov-b', false, 'alice'],
      ['prov-c', true, 'carol'],
      ['prov-d', false, 'bob'],
      ['prov-e', true, 'alice'],
    ];
    for (const [provider, stream, requester] of plan) {
      const result = await callThroughSdk({
        proxyBase: proxy.proxyBase,
        provider,
        token: proxy.account.token,
        stream,
        headers: { 'x-proxy-user': requester },
      });
      ids.push(result.requestId);
    }
    // A cache miss then a hit, and a provider error.
    const messages = [{ role: 'user' as const, content: 'stats cache' }];
    for (let i = 0; i < 2; i++) {
      const result = await callThroughSdk({
        proxyBase: proxy.proxyBase,
        provider: 'prov-b',
        token: proxy.account.token,
        stream: false,
        messages,
        headers: { 'x-proxy-cache': 'true', 'x-proxy-user': 'carol' },
      });
      ids.push(result.requestId);
    }
    // A 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
    for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-d'].next({ status: 500 });
    const failed = await callThroughSdk({
      proxyBase: proxy.proxyBase,
      provider: 'prov-d',
      token: proxy.account.token,
      stream: false,
    }).catch((e) => e);
    ids.push(failed.headers.get('x-proxy-request-id'));
    for (const fake of Object.values(proxy.fakes.fakes)) fake.always(undefined);
  });

  it('totals and breakdowns equal the sums of the rows', async () => {
    const rows = (await proxy.rowsFor(proxy.account.token, ids)) as Row[];
    expect(rows).toHaveLength(ids.length);
    const now = Date.now();
    const body = await statsCaughtUp(
      proxy.account.token,
      `from=${new Date(now - 3_600_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}`,
      rows.length,
    );
    const totals = body.totals;
    expect(totals.requests).toBe(rows.length);
    expect(totals.input_tokens).toBe(sum(rows, 'input_tokens'));
    expect(totals.output_tokens).toBe(sum(rows, 'output_tokens'));
    expect(totals.cost_nanos).toBe(sum(rows, 'cost_nanos'));
    expect(totals.saved_nanos).toBe(sum(rows, 'saved_nanos'));
    expect(totals.savings_usd).toBeCloseTo(sum(rows, 'saved_usd'), 12);
    expect(totals.cache_hits).toBe(rows.filter((r) => r.cached).length);
    expect(totals.cache_hits).toBe(1);
    expect(totals.errors).toBe(rows.filter((r) => Number(r.status_code) >= 400).length);
    expect(totals.errors).toBe(1);
    expect(totals.saved_nanos).toBeGreaterThan(0);

    for (const entry of body.by_provider) {
      const own = rows.filter((r) => r.provider === entry.provider);
      expect([entry.provider, entry.requests, entry.cost_nanos]).toEqual([
        entry.provider,
        own.length,
        sum(own, 'cost_nanos'),
      ]);
    }
    for (const entry of body.by_requester) {
      const own = rows.filter((r) => (r.requester ?? '') === entry.requester);
      expect([entry.requester, entry.requests, entry.input_tokens]).toEqual([
        entry.requester,
        own.length,
        sum(own, 'input_tokens'),
      ]);
    }
    const today = new Date(now).toISOString().slice(0, 10);
    const day = body.by_day.find((d: { day: string }) => d.day === today);
    expect(day.requests).toBe(rows.length);
    expect(day.cost_nanos).toBe(sum(rows, 'cost_nanos'));
  });

  it('excludes rows outside from/to', async () => {
    const future = Date.now() + 2 * 3_600_000;
    const body = await stats(
      proxy.account.token,
      `from=${new Date(future).toISOString()}&to=${new Date(future + 3_600_000).toISOString()}`,
    );
    expect(body.totals.requests).toBe(0);
    const past = await stats(proxy.account.token, `from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`);
    expect(past.totals.requests).toBe(0);
  });

  it('shows another account nothing of this one', async () => {
    const other = await proxy.createAccount('stats-other');
    const body = await stats(other.token, '');
    expect(body.totals.requests).toBe(0);
    expect(body.by_provider).toEqual([]);
  });

  it('rejects a bad period with a 400 naming the field', async () => {
    const response = await proxy.api('/api/stats?from=yesterday', { token: proxy.account.token });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain('from');
  });
});
