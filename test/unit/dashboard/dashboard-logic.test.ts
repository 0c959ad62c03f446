/** The dashboard's pure parts (no browser): money display, periods, chart series, and its copy of the provider list. */
import { formatCost, formatPercent, formatUsd } from '../../../lambda/dashboard/src/format';
import { periodFromParams, periodRange, utcDaysBetween } from '../../../lambda/dashboard/src/period';
import { PROVIDERS } from '../../../lambda/dashboard/src/providers';
import type { LogRow, ProviderSlice, Stats, Totals } from '../../../lambda/dashboard/src/types';
import { mergeRefreshed } from '../../../lambda/dashboard/src/views/log-pages';
import { timeSeries } from '../../../lambda/dashboard/src/views/overview-charts';
import { PROVIDERS as REGISTRY } from '../../../lambda/providers/registry';

describe('formatUsd', () => {
  test.each([
    [0, '$0.00'],
    [1234.5, '$1,234.50'],
    [1, '$1.00'],
    [0.5, '$0.50'],
    [0.1234, '$0.123'],
    [0.05, '$0.05'],
    [0.0669, '$0.0669'],
    [0.004914, '$0.00491'],
    [0.0001672, '$0.000167'],
    [0.001234, '$0.00123'],
    [0.00000123, '$0.00000123'],
    [0.000012345678, '$0.0000123'],
    [0.9996, '$1.00'],
    [0.99949, '$0.999'],
    [-0.25, '-$0.25'],
    [Number.NaN, '$0.00'],
  ])('%p → %s', (value, text) => {
    expect(formatUsd(value)).toBe(text);
  });

  test('a tiny cost never reads as zero', () => {
    for (const cost of [1e-9, 3e-8, 7.5e-7, 0.0000042]) expect(formatUsd(cost)).not.toBe('$0.00');
  });
});

test('a sum with unpriced requests says so instead of showing $0.00', () => {
  expect(formatCost({ cost_usd: 0, unpriced_requests: 3 })).toBe('unpriced');
  expect(formatCost({ cost_usd: 0.0669, unpriced_requests: 1 })).toBe('$0.0669 + unpriced');
  expect(formatCost({ cost_usd: 0, unpriced_requests: 0 })).toBe('$0.00');
  expect(formatCost({ cost_usd: 12.5 })).toBe('$12.50');
});

test('formatPercent has nothing to divide by with no requests', () => {
  expect(formatPercent(1, 4)).toBe('25.0%');
  expect(formatPercent(0, 0)).toBe('—');
});

describe('periods', () => {
  const now = new Date(2026, 10, 21, 15, 30); // local time, like the browser's

  test('presets count whole local days back from today, up to now', () => {
    expect(periodRange({ kind: 'today' }, now)).toEqual({
      from: new Date(2026, 10, 21).toISOString(),
      to: now.toISOString(),
    });
    expect(periodRange({ kind: '7d' }, now).from).toBe(new Date(2026, 10, 15).toISOString());
    expect(periodRange({ kind: '30d' }, now).from).toBe(new Date(2026, 9, 23).toISOString());
  });

  test('a custom period includes its last day: `to` is the next midnight (the API excludes `to`)', () => {
    expect(periodRange({ kind: 'custom', from: '2026-11-01', to: '2026-11-03' }, now)).toEqual({
      from: new Date(2026, 10, 1).toISOString(),
      to: new Date(2026, 10, 4).toISOString(),
    });
  });

  test('the hash keeps the period; anything unknown falls back to 7 days', () => {
    expect(periodFromParams(new URLSearchParams('period=30d'))).toEqual({ kind: '30d' });
    expect(periodFromParams(new URLSearchParams('period=custom&from=2026-11-01&to=2026-11-02'))).toEqual({
      kind: 'custom',
      from: '2026-11-01',
      to: '2026-11-02',
    });
    expect(periodFromParams(new URLSearchParams('period=year'))).toEqual({ kind: '7d' });
  });

  test('UTC days of [from, to) leave out a `to` at midnight', () => {
    expect(utcDaysBetween('2026-11-01T10:00:00Z', '2026-11-03T00:00:00Z')).toEqual(['2026-11-01', '2026-11-02']);
  });
});

test('daily series fill quiet days with zero and keep the registry order of providers', () => {
  const zero: Totals = {
    requests: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: 0,
    cost_nanos: 0,
    savings_usd: 0,
    saved_nanos: 0,
    cache_hits: 0,
    errors: 0,
    unpriced_requests: 0,
    estimated_requests: 0,
    estimated_input_tokens: 0,
    estimated_output_tokens: 0,
    estimated_cost_nanos: 0,
    estimated_cost_usd: 0,
    latency_avg_ms: 0,
    latency_p95_ms: 0,
  };
  const stats: Stats = {
    from: '2026-11-01T00:00:00.000Z',
    to: '2026-11-04T00:00:00.000Z',
    totals: zero,
    by_day: [
      { ...zero, day: '2026-11-01', by_provider: { 'prov-c': { requests: 2, cost_usd: 0.5 } } },
      {
        ...zero,
        day: '2026-11-03',
        by_provider: { 'prov-a': { requests: 1, cost_usd: 0.25 }, 'prov-c': { requests: 1, cost_usd: 0.1 } },
      },
    ],
    by_provider: [],
    by_model: [],
    by_requester: [],
    by_hour: [],
    by_token: [],
    by_kind: [],
    by_tag: {},
  };
  const series = timeSeries(stats);
  expect(series.unit).toBe('day');
  expect(series.keys).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
  expect(series.requests.map((s) => [s.label, s.values])).toEqual([
    ['Anthropic', [0, 0, 1]],
    ['Google Gemini', [2, 0, 1]],
  ]);
  expect(series.cost[1]?.values).toEqual([0.5, 0, 0.1]);

  // Up to two days the server sends hours, and the charts use them; a quiet hour has no latency (a gap).
  const hour = (h: string, requests: number, extra: Partial<Totals> = {}) => ({
    ...zero,
    requests,
    ...extra,
    hour: `2026-11-01T${h}:00:00.000Z`,
    by_provider: (requests ? { 'prov-b': { requests, cost_usd: 0.01 } } : {}) as Record<string, ProviderSlice>,
  });
  const hourly = timeSeries({
    ...stats,
    by_hour: [
      hour('10', 2, { input_tokens: 7, output_tokens: 3, latency_avg_ms: 120, latency_p95_ms: 300 }),
      hour('11', 0),
      hour('12', 1, { latency_avg_ms: 80, latency_p95_ms: 80 }),
    ],
  });
  expect([hourly.unit, hourly.keys.length, hourly.labels.length]).toEqual(['hour', 3, 3]);
  expect(hourly.requests.map((s) => [s.label, s.values])).toEqual([['OpenAI', [2, 0, 1]]]);
  expect(hourly.tokens.map((s) => [s.label, s.values])).toEqual([
    ['Input', [7, 0, 0]],
    ['Output', [3, 0, 0]],
  ]);
  expect(hourly.latency.map((s) => [s.label, s.values])).toEqual([
    ['Average', [120, null, 80]],
    ['p95', [300, null, 80]],
  ]);
});

test("the dashboard's provider list matches the server's registry", () => {
  expect(PROVIDERS.map((p) => ({ id: p.id, name: p.name, model: p.exampleModel }))).toEqual(
    REGISTRY.map((p) => ({ id: p.id, name: p.displayName, model: p.exampleModel })),
  );
});

describe('a refresh of the logs keeps the pages already loaded', () => {
  const row = (n: number) => ({ id: `r${n}` }) as LogRow;
  const rows = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => row(from - i));

  test('new rows go on top; rows loaded with "Load more" and their cursor stay', () => {
    const shown = { rows: rows(100, 1), cursor: 'older-than-r1' };
    const merged = mergeRefreshed(shown, { items: rows(103, 54), next_cursor: 'older-than-r54' });
    expect(merged.rows.map((r) => r.id)).toEqual(rows(103, 1).map((r) => r.id));
    expect(merged.cursor).toBe('older-than-r1');
  });

  test('more new rows than a page: the list starts over, never showing a gap', () => {
    const merged = mergeRefreshed({ rows: rows(100, 1), cursor: 'c1' }, { items: rows(200, 151), next_cursor: 'c151' });
    expect(merged).toEqual({ rows: rows(200, 151), cursor: 'c151' });
  });

  test('only the first page shown: the fresh page replaces it', () => {
    const merged = mergeRefreshed({ rows: rows(50, 1), cursor: 'c1' }, { items: rows(52, 3), next_cursor: 'c3' });
    expect(merged).toEqual({ rows: rows(52, 3), cursor: 'c3' });
  });
});
