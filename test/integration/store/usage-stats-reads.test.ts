// Period boundaries, what a stats read costs and the /api/stats route over the rollups; the sums over many rows and account isolation: usage-stats.test.ts.
import { statsRoutes } from '../../../lambda/api/stats-routes';
import type { Deps } from '../../../lambda/wiring/deps';
import type { IncomingRequest } from '../../../lambda/http/request';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import type { TokenRecord } from '../../../lambda/auth/ports';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import type { StatsSummary } from '../../../lambda/usage/usage-stats';

import { HOUR, DAY, makeRow, addAll, sums, countingQueries, statsOnFreshTables } from './support/usage-stats-rows';

const store = statsOnFreshTables();

describe('period boundaries', () => {
  it('includes a row at from and excludes one just before from and one at to', async () => {
    const from = Date.parse('2026-09-10T13:00:00Z');
    const to = Date.parse('2026-09-12T15:00:00Z');
    const edgeRows = [from - 1, from, to - 1, to].map((ts) => makeRow('acc-edges', ts, { cost_nanos: 1_000 }));
    await addAll(store.stats, edgeRows);
    const summary = await store.stats.summarize('acc-edges', new Date(from), new Date(to));
    expect(summary.totals).toMatchObject({ requests: 2, cost_nanos: 2_000 });
    expect(summary.by_day.map((d) => [d.day, d.requests])).toEqual([
      ['2026-09-10', 1],
      ['2026-09-11', 0],
      ['2026-09-12', 1],
    ]);
    // Within one hour: from rounds down and to up, and the answer says so.
    const widened = await store.stats.summarize(
      'acc-edges',
      new Date(from + 20 * 60_000),
      new Date(from + 40 * 60_000),
    );
    expect([widened.from, widened.to, widened.totals.requests]).toEqual([
      '2026-09-10T13:00:00.000Z',
      '2026-09-10T14:00:00.000Z',
      1,
    ]);
  });
});

describe('read cost', () => {
  it('reads a 30-day overview from at most (whole days + 46 edge hours) × combinations items, never the rows', async () => {
    const combos = [
      { provider: 'prov-a' as const, model: 'fam-opus-4-6', requester: 'alice' },
      { provider: 'prov-a' as const, model: 'fam-opus-4-6', requester: undefined },
      { provider: 'prov-c' as const, model: 'fam-2.5-pro', requester: 'bob' },
    ];
    const day0 = Date.parse('2026-08-01T00:00:00Z');
    const busyRows: UsageRow[] = [];
    for (let day = 0; day < 32; day++) {
      for (const [i, combo] of combos.entries()) {
        // Four rows a day in three hours: the two in the same hour share one rollup item.
        for (const minute of [3 * 60, (10 + i) * 60, 15 * 60, 15 * 60 + 1]) {
          busyRows.push(makeRow('acc-busy', day0 + day * DAY + minute * 60_000, { ...combo, cost_nanos: 7 }));
        }
      }
    }
    // Folded before any of their hours sealed, so none of their sums is kept yet.
    await addAll(new DynamoUsageStats(store.doc, store.table, () => day0), busyRows);

    const from = new Date(day0 + DAY + 10 * HOUR);
    const to = new Date(from.getTime() + 30 * DAY);
    const read = async () => {
      const counting = countingQueries(store.doc);
      const summary = await new DynamoUsageStats(counting.doc, store.table).summarize('acc-busy', from, to);
      return { summary, ...counting.seen };
    };
    // The period's units: 14 hours of day 1 (10:00 on), 29 whole days, 10 hours of day 31.
    const units = 14 + 29 + 10;

    // The first read sums each past hour and day from its rollup items, and keeps the sums.
    const first = await read();
    const inside = busyRows.filter((r) => r.ts >= first.summary.from && r.ts < first.summary.to);
    expect(first.summary.totals).toMatchObject(sums(inside));
    // Per combination: one DAY item for each whole day, the HOUR items of day 1 from 10:00
    // (hours 10+i and 15) and of day 31 before 10:00 (hour 3).
    expect(first.items).toBe((29 + 2 + 1) * combos.length);
    expect(first.items).toBeLessThan(inside.length / 2);
    // One query per run of kept sums (leading hours, days, trailing hours), then one per unit to sum.
    expect(first.queries).toBe(3 + units);

    // Later reads read one item per hour or day, whatever the number of rollup items in it.
    const second = await read();
    expect(second.summary).toEqual(first.summary);
    expect(second.items).toBe(units);
    expect(second.queries).toBe(3);
  });

  it('counts a late row in a past day whose sums were kept: the fold marks them stale and sums that day again', async () => {
    const day0 = Date.parse('2026-07-01T00:00:00Z');
    const rows = [0, 1, 2, 3].map((day) => makeRow('acc-late', day0 + day * DAY + 5 * HOUR, { cost_nanos: 10 }));
    await addAll(store.stats, rows);
    const from = new Date(day0);
    const to = new Date(day0 + 4 * DAY);
    expect((await store.stats.summarize('acc-late', from, to)).totals).toMatchObject({ requests: 4, cost_nanos: 40 });

    // A row of day 2 arrives late (a replayed spool): the kept sums of day 2 no longer hold.
    await addAll(store.stats, [makeRow('acc-late', day0 + 2 * DAY + 7 * HOUR, { cost_nanos: 5 })]);
    const counting = countingQueries(store.doc);
    const after = await new DynamoUsageStats(counting.doc, store.table).summarize('acc-late', from, to);
    expect(after.totals).toMatchObject({ requests: 5, cost_nanos: 45 });
    expect(after.by_day.map((d) => d.requests)).toEqual([1, 1, 2, 1]);
    // The fold kept day 2's sums again, with the late row: the read reads the four days' sums alone.
    expect(counting.seen).toMatchObject({ queries: 1, items: 4 });
  });
});

describe('GET /api/stats', () => {
  const caller = {
    accountId: 'acc-edges',
    tokenId: 'tok',
    scopes: ['manage'],
    secretHash: '',
    createdAt: '',
  } as TokenRecord;
  // Token names are joined in from the account store; the names themselves are checked through the real server (test/integration/logs-api).
  const deps = () =>
    ({
      usageStats: store.stats,
      accounts: { listTokens: async () => [] },
      now: () => Date.parse('2026-09-13T10:30:00Z'),
    }) as unknown as Deps;
  const request = (query: string) =>
    ({
      method: 'GET',
      path: '/api/stats',
      query: new URLSearchParams(query),
      headers: {},
      body: Buffer.alloc(0),
    }) as unknown as IncomingRequest;
  const route = statsRoutes.find((r) => r.method === 'GET' && r.path === '/api/stats')!;

  it('needs a manage token and answers the caller’s own account, for the last seven days by default', async () => {
    expect(route.access).toBe('manage');
    const response = await route.handle({ deps: deps(), request: request(''), params: {}, caller });
    expect(response.statusCode).toBe(200);
    const body = JSON.parse(String(response.body)) as StatsSummary;
    expect([body.from, body.to]).toEqual(['2026-09-06T10:00:00.000Z', '2026-09-13T11:00:00.000Z']);
    expect(body.totals.requests).toBe(4);
    expect(body.by_day).toHaveLength(8);
  });

  it('answers a malformed period with a 400 naming the field', async () => {
    await expect(
      route.handle({ deps: deps(), request: request('from=last-week'), params: {}, caller }),
    ).rejects.toMatchObject({ status: 400, details: { param: 'from' } });
  });
});
