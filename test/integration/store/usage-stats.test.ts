import {
  TOKENS,
  makeRow,
  generateRows,
  addAll,
  sums,
  expectP95Close,
  groupBy,
  expectBreakdown,
  statsOnFreshTables,
} from './support/usage-stats-rows';

const store = statsOnFreshTables();

describe('DynamoUsageStats.summarize over many rows', () => {
  const start = Date.parse('2026-10-25T00:00:00Z');
  const end = Date.parse('2026-11-05T00:00:00Z');
  const rows = generateRows('acc-main', 400, start, end, 42);

  beforeAll(async () => {
    await addAll(store.stats, rows);
  });

  it('equals the exact sums of the rows in the (hour-widened) period, in total and per day, provider, model and requester', async () => {
    const summary = await store.stats.summarize(
      'acc-main',
      new Date('2026-10-27T09:20:00Z'),
      new Date('2026-11-03T17:10:00Z'),
    );
    expect(summary.from).toBe('2026-10-27T09:00:00.000Z');
    expect(summary.to).toBe('2026-11-03T18:00:00.000Z');
    const inside = rows.filter((r) => r.ts >= summary.from && r.ts < summary.to);
    expect(inside.length).toBeGreaterThan(200);
    expect(inside.length).toBeLessThan(rows.length);

    expect(summary.totals).toMatchObject(sums(inside));
    expectP95Close(summary.totals, inside);

    const byDay = groupBy(inside, (r) => r.ts.slice(0, 10));
    expect(summary.by_day.map((d) => d.day)).toEqual([
      '2026-10-27',
      '2026-10-28',
      '2026-10-29',
      '2026-10-30',
      '2026-10-31',
      '2026-11-01',
      '2026-11-02',
      '2026-11-03',
    ]);
    for (const day of summary.by_day) {
      const dayRows = byDay.get(day.day) ?? [];
      expect(day).toMatchObject(sums(dayRows));
      const perProvider = groupBy(dayRows, (r) => r.provider);
      expect(Object.keys(day.by_provider).sort()).toEqual([...perProvider.keys()].sort());
      for (const [provider, providerRows] of perProvider) {
        expect(day.by_provider[provider]).toEqual({
          requests: providerRows.length,
          cost_usd: sums(providerRows).cost_nanos / 1e9,
        });
      }
    }

    expectBreakdown(
      summary.by_provider,
      inside,
      (r) => r.provider,
      (e) => e.provider,
    );
    expectBreakdown(
      summary.by_model,
      inside,
      (r) => `${r.provider} ${r.model}`,
      (e) => `${e.provider} ${e.model}`,
    );
    expectBreakdown(
      summary.by_requester,
      inside,
      (r) => r.requester ?? '',
      (e) => e.requester,
    );
    expectBreakdown(
      summary.by_token,
      inside,
      (r) => r.token_id,
      (e) => e.token_id,
    );
    expect(summary.by_token.map((t) => t.token_id).sort()).toEqual(TOKENS);
    expect(summary.by_hour).toEqual([]);
    expect(summary.by_model.map((m) => m.model)).toEqual(
      expect.arrayContaining(['fam-4o#preview', 'mistral-small%latest']),
    );
    expect(summary.by_requester.map((r) => r.requester)).toEqual(expect.arrayContaining(['', 'bob#ops', '100% team']));
  });

  it('reads a period of up to two days hour by hour: every hour, its providers and tokens exact', async () => {
    const summary = await store.stats.summarize(
      'acc-main',
      new Date('2026-10-30T05:10:00Z'),
      new Date('2026-11-01T05:00:00Z'),
    );
    expect([summary.from, summary.to]).toEqual(['2026-10-30T05:00:00.000Z', '2026-11-01T05:00:00.000Z']);
    const inside = rows.filter((r) => r.ts >= summary.from && r.ts < summary.to);
    expect(inside.length).toBeGreaterThan(40);
    expect(summary.totals).toMatchObject(sums(inside));
    expect(summary.by_hour).toHaveLength(48);
    const byHour = groupBy(inside, (r) => r.ts.slice(0, 13));
    for (const hour of summary.by_hour) {
      const hourRows = byHour.get(hour.hour.slice(0, 13)) ?? [];
      expect(hour).toMatchObject(sums(hourRows));
      expectP95Close(hour, hourRows);
      for (const [provider, providerRows] of groupBy(hourRows, (r) => r.provider)) {
        expect(hour.by_provider[provider]).toEqual({
          requests: providerRows.length,
          cost_usd: sums(providerRows).cost_nanos / 1e9,
        });
      }
    }
    expect(summary.by_hour.filter((h) => h.requests > 0).length).toBeGreaterThan(10);
    expect(summary.by_day.map((d) => [d.day, d.requests])).toEqual(
      ['2026-10-30', '2026-10-31', '2026-11-01'].map((day) => [day, inside.filter((r) => r.ts.startsWith(day)).length]),
    );
    expectBreakdown(
      summary.by_token,
      inside,
      (r) => r.token_id,
      (e) => e.token_id,
    );
  });

  it('reports quiet days inside the period as zeros', async () => {
    const summary = await store.stats.summarize(
      'acc-main',
      new Date('2026-11-04T00:00:00Z'),
      new Date('2026-11-08T00:00:00Z'),
    );
    expect(summary.by_day.map((d) => [d.day, d.requests])).toEqual([
      ['2026-11-04', rows.filter((r) => r.ts.startsWith('2026-11-04')).length],
      ['2026-11-05', 0],
      ['2026-11-06', 0],
      ['2026-11-07', 0],
    ]);
    expect(summary.by_day[3]).toMatchObject({
      cost_usd: 0,
      savings_usd: 0,
      errors: 0,
      latency_p95_ms: 0,
      by_provider: {},
    });
  });
});

describe('account isolation', () => {
  it('shows one account nothing of another', async () => {
    await addAll(store.stats, [
      makeRow('acc-other', Date.parse('2026-10-30T12:00:00Z'), { cost_nanos: 5, requester: 'carol' }),
    ]);
    const fresh = await store.stats.summarize(
      'acc-fresh',
      new Date('2026-10-20T00:00:00Z'),
      new Date('2026-11-10T00:00:00Z'),
    );
    expect(fresh.totals).toMatchObject(sums([]));
    expect([fresh.by_provider, fresh.by_model, fresh.by_requester]).toEqual([[], [], []]);
    expect(fresh.by_day.every((d) => d.requests === 0)).toBe(true);
    const other = await store.stats.summarize(
      'acc-other',
      new Date('2026-10-20T00:00:00Z'),
      new Date('2026-11-10T00:00:00Z'),
    );
    expect(other.totals).toMatchObject({ requests: 1, cost_nanos: 5 });
    expect(other.by_requester.map((r) => r.requester)).toEqual(['carol']);
  });
});
