import { latencyBucket } from '../../../lambda/usage/rollups/latency-histogram';
import { emptyRollup, rollupFromItem, rowIncrements, type Rollup } from '../../../lambda/usage/rollups/rollup';
import type { BucketDimensions } from '../../../lambda/usage/rollups/bucket-keys';
import { DimensionSums } from '../../../lambda/usage/rollups/dimension-sums';
import { assembleSummary, MAX_LISTED_TAG_KEYS, MAX_LISTED_TAG_VALUES } from '../../../lambda/usage/rollups/summary';
import type { UsageRow } from '../../../lambda/usage/usage-row';

function row(overrides: Partial<UsageRow>): UsageRow {
  return {
    account_id: 'acc',
    id: 'r1',
    ts: '2026-11-21T13:00:00.000Z',
    provider: 'prov-b',
    kind: 'chat',
    model: 'fam-4o-mini',
    input_tokens: 10,
    output_tokens: 5,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: 0,
    cost_nanos: 0,
    priced: true,
    latency_ms: 100,
    status_code: 200,
    cached: false,
    saved_usd: 0,
    saved_nanos: 0,
    stream: false,
    mode: 'stored',
    token_id: 't',
    ...overrides,
  };
}

function rollupOf(...rows: UsageRow[]): Rollup {
  const total = emptyRollup();
  for (const r of rows) {
    const one = rollupFromItem(rowIncrements(r));
    for (const [k, v] of Object.entries(one.counts)) total.counts[k as keyof Rollup['counts']] += v;
    one.latency.forEach((n, i) => (total.latency[i] += n));
  }
  return total;
}

/** One rollup item read back: which day (and hour) and dimensions it counts. */
interface RollupSlice extends BucketDimensions {
  day: string;
  hour?: string;
  rollup: Rollup;
}

/** The summary of the slices, each summed on its own as one hour or day of the period. */
function summaryOf(of: { from: Date; to: Date }, slices: readonly RollupSlice[]) {
  return assembleSummary(
    of,
    slices.map(({ day, hour, rollup, ...dims }) => {
      const sums = new DimensionSums();
      sums.addSlice(dims, rollup);
      return { day, ...(hour ? { hour } : {}), sums: sums.toPacked() };
    }),
  );
}

function slice(day: string, provider: string, model: string, requester: string, ...rows: UsageRow[]): RollupSlice {
  return {
    day,
    provider,
    model,
    requester,
    token: rows[0]?.token_id ?? '',
    kind: rows[0]?.kind ?? 'chat',
    rollup: rollupOf(...rows),
  };
}

const period = { from: new Date('2026-11-20T00:00:00Z'), to: new Date('2026-11-23T00:00:00Z') };

describe('rowIncrements', () => {
  it('counts a request, its tokens and money, and one latency bucket', () => {
    const increments = rowIncrements(row({ cost_nanos: 1234, cache_read_tokens: 3, latency_ms: 3000 }));
    expect(increments).toEqual({
      requests: 1,
      input_tokens: 10,
      output_tokens: 5,
      cache_read_tokens: 3,
      cache_write_tokens: 0,
      cost_nanos: 1234,
      saved_nanos: 0,
      cache_hits: 0,
      errors: 0,
      latency_sum_ms: 3000,
      unpriced: 0,
      estimated_requests: 0,
      estimated_input_tokens: 0,
      estimated_output_tokens: 0,
      estimated_cost_nanos: 0,
      [`lat_${String(latencyBucket(3000)).padStart(2, '0')}`]: 1,
    });
  });

  it('marks cache hits and errors', () => {
    expect(rowIncrements(row({ cached: true, saved_nanos: 99 }))).toMatchObject({
      cache_hits: 1,
      errors: 0,
      saved_nanos: 99,
    });
    expect(rowIncrements(row({ status_code: 400 }))).toMatchObject({ errors: 1 });
    expect(rowIncrements(row({ status_code: 399 }))).toMatchObject({ errors: 0 });
  });

  it('counts answered, uncached requests of unpriced models, so a total can say its cost is incomplete', () => {
    expect(rowIncrements(row({ priced: false }))).toMatchObject({ unpriced: 1 });
    expect(rowIncrements(row({ priced: false, status_code: 500 }))).toMatchObject({ unpriced: 0 });
    expect(rowIncrements(row({ priced: false, cached: true }))).toMatchObject({ unpriced: 0 });
    expect(rowIncrements(row({ priced: true }))).toMatchObject({ unpriced: 0 });
  });

  it('keeps the figures of a row with estimated usage apart, besides counting them in the totals', () => {
    const estimated = rowIncrements(row({ usage_estimated: true, cost_nanos: 700 }));
    expect(estimated).toMatchObject({ requests: 1, input_tokens: 10, output_tokens: 5, cost_nanos: 700 });
    expect(estimated).toMatchObject({
      estimated_requests: 1,
      estimated_input_tokens: 10,
      estimated_output_tokens: 5,
      estimated_cost_nanos: 700,
    });
    expect(rowIncrements(row({ cost_nanos: 700 }))).toMatchObject({ estimated_requests: 0, estimated_cost_nanos: 0 });
  });
});

describe('assembleSummary', () => {
  it('lists every day of the period, quiet days as zeros', () => {
    const summary = summaryOf(period, [slice('2026-11-21', 'prov-b', 'fam-4o-mini', '', row({ cost_nanos: 7 }))]);
    expect(summary.from).toBe('2026-11-20T00:00:00.000Z');
    expect(summary.to).toBe('2026-11-23T00:00:00.000Z');
    expect(summary.by_day.map((d) => [d.day, d.requests])).toEqual([
      ['2026-11-20', 0],
      ['2026-11-21', 1],
      ['2026-11-22', 0],
    ]);
    expect(summary.by_day[0]).toMatchObject({ cost_usd: 0, latency_avg_ms: 0, latency_p95_ms: 0, by_provider: {} });
    expect(summary.by_day[1].by_provider).toEqual({ 'prov-b': { requests: 1, cost_usd: 7e-9 } });
  });

  it('sums money in integer nanos and converts once', () => {
    // Ten rows of 0.1 USD: adding dollars would give 0.9999999999999999.
    const rows = Array.from({ length: 10 }, (_, i) =>
      row({ id: `r${i}`, cost_nanos: 100_000_000, saved_nanos: 100_000_000 }),
    );
    const summary = summaryOf(
      period,
      rows.map((r) => slice('2026-11-21', 'prov-b', 'fam-4o-mini', '', r)),
    );
    expect(summary.totals).toMatchObject({
      cost_nanos: 1_000_000_000,
      cost_usd: 1,
      saved_nanos: 1_000_000_000,
      savings_usd: 1,
    });
  });

  it('breaks down by provider, model (per provider) and requester, costliest first, then busiest', () => {
    const summary = summaryOf(period, [
      slice('2026-11-20', 'prov-b', 'shared-model', 'alice', row({ cost_nanos: 10 })),
      slice('2026-11-21', 'prov-d', 'shared-model', 'bob', row({ cost_nanos: 30 })),
      slice('2026-11-21', 'prov-b', 'cheap', '', row({}), row({}), row({})),
      slice('2026-11-22', 'prov-e', 'free', '', row({})),
    ]);
    expect(summary.by_provider.map((p) => [p.provider, p.cost_nanos, p.requests])).toEqual([
      ['prov-d', 30, 1],
      ['prov-b', 10, 4],
      ['prov-e', 0, 1],
    ]);
    expect(summary.by_model.map((m) => [m.provider, m.model])).toEqual([
      ['prov-d', 'shared-model'],
      ['prov-b', 'shared-model'],
      ['prov-b', 'cheap'],
      ['prov-e', 'free'],
    ]);
    expect(summary.by_requester.map((r) => [r.requester, r.requests])).toEqual([
      ['bob', 1],
      ['alice', 1],
      ['', 4],
    ]);
    expect(summary.totals).toMatchObject({ requests: 6, cost_nanos: 40, input_tokens: 60, output_tokens: 30 });
  });

  it('breaks down by endpoint kind; buckets from before kinds count as the provider’s main endpoint', () => {
    const summary = summaryOf(period, [
      slice('2026-11-20', 'prov-b', 'gpt-4.1', 'alice', row({ kind: 'responses', cost_nanos: 50 })),
      slice(
        '2026-11-20',
        'prov-b',
        'text-embedding-3-small',
        'alice',
        row({ kind: 'embeddings', cost_nanos: 2 }),
        row({ kind: 'embeddings', cost_nanos: 2 }),
      ),
      slice('2026-11-21', 'prov-a', 'unknown', '', row({ kind: 'models', cost_nanos: 0 })),
      { ...slice('2026-11-21', 'prov-a', 'claude-sonnet-4-6', '', row({ cost_nanos: 7 })), kind: '' },
      { ...slice('2026-11-21', 'prov-d', 'mistral-small', '', row({ cost_nanos: 3 })), kind: '' },
    ]);
    expect(summary.by_kind.map((k) => [k.kind, k.requests, k.cost_nanos])).toEqual([
      ['responses', 1, 50],
      ['messages', 1, 7],
      ['embeddings', 2, 4],
      ['chat', 1, 3],
      ['models', 1, 0],
    ]);
  });

  it('derives the average and p95 latency from the rollups', () => {
    const rows = [...Array(19).fill(100), 2000].map((ms, i) => row({ id: `r${i}`, latency_ms: ms }));
    const { totals } = summaryOf(period, [slice('2026-11-21', 'prov-b', 'm', '', ...rows)]);
    expect(totals.latency_avg_ms).toBe(Math.round((19 * 100 + 2000) / 20));
    expect(totals.latency_p95_ms).toBeGreaterThanOrEqual(85);
    expect(totals.latency_p95_ms).toBeLessThanOrEqual(119);
  });

  it('breaks down by proxy token, costliest first, with old token-less buckets as ""', () => {
    const summary = summaryOf(period, [
      slice('2026-11-20', 'prov-b', 'm', '', row({ token_id: 'acc_app1', cost_nanos: 5 })),
      slice('2026-11-21', 'prov-d', 'm', 'bob', row({ token_id: 'acc_app1', cost_nanos: 7 })),
      slice('2026-11-21', 'prov-b', 'm', '', row({ token_id: 'acc_app2', cost_nanos: 20 })),
      slice('2026-11-22', 'prov-b', 'm', '', row({ token_id: '' })),
    ]);
    expect(summary.by_token.map((t) => [t.token_id, t.requests, t.cost_nanos])).toEqual([
      ['acc_app2', 1, 20],
      ['acc_app1', 2, 12],
      ['', 1, 0],
    ]);
  });

  it('has no hourly series for a period longer than two days', () => {
    expect(summaryOf(period, []).by_hour).toEqual([]);
  });

  it('lists every hour of a period of up to two days, quiet hours as zeros, with its providers', () => {
    const short = { from: new Date('2026-11-21T22:00:00Z'), to: new Date('2026-11-22T02:00:00Z') };
    const hourly = (hour: string, provider: string, ...rows: UsageRow[]): RollupSlice => ({
      ...slice(hour.slice(0, 10), provider, 'm', '', ...rows),
      hour,
    });
    const summary = summaryOf(short, [
      hourly('2026-11-21T22', 'prov-b', row({ cost_nanos: 3, latency_ms: 50 })),
      hourly('2026-11-22T01', 'prov-b', row({ cost_nanos: 4 })),
      hourly('2026-11-22T01', 'prov-a', row({ cost_nanos: 6, latency_ms: 300 }), row({ latency_ms: 500 })),
    ]);
    expect(summary.by_hour.map((h) => [h.hour, h.requests, h.cost_nanos])).toEqual([
      ['2026-11-21T22:00:00.000Z', 1, 3],
      ['2026-11-21T23:00:00.000Z', 0, 0],
      ['2026-11-22T00:00:00.000Z', 0, 0],
      ['2026-11-22T01:00:00.000Z', 3, 10],
    ]);
    expect(summary.by_hour[3].by_provider).toEqual({
      'prov-b': { requests: 1, cost_usd: 4e-9 },
      'prov-a': { requests: 2, cost_usd: 6e-9 },
    });
    expect(summary.by_hour[3].latency_avg_ms).toBe(Math.round((100 + 300 + 500) / 3));
    expect(summary.by_day.map((d) => [d.day, d.requests])).toEqual([
      ['2026-11-21', 1],
      ['2026-11-22', 3],
    ]);
  });
});

describe('by_tag', () => {
  /** One day whose tag rollups hold these keys and values, each value `cost` nanos a row. */
  function taggedDay(day: string, tags: [key: string, value: string, cost: number][]) {
    const sums = new DimensionSums();
    for (const [key, value, cost] of tags) sums.addTag(key, value, rollupOf(row({ cost_nanos: cost })));
    return { day, sums: sums.toPacked() };
  }

  it('lists the 10 costliest values of a key and sums the rest into (other), saying how many', () => {
    const values = Array.from({ length: 14 }, (_, i): [string, string, number] => ['team', `t${i}`, 100 + i]);
    const { by_tag } = assembleSummary(period, [taggedDay('2026-11-21', values)]);
    expect(Object.keys(by_tag.team)).toHaveLength(MAX_LISTED_TAG_VALUES + 1);
    expect(by_tag.team.t13.cost_nanos).toBe(113);
    expect(by_tag.team.t3).toBeUndefined();
    expect(by_tag.team['(other)']).toMatchObject({ requests: 4, cost_nanos: 100 + 101 + 102 + 103, other: 4 });
    expect(by_tag.team['(other)'].past_daily_cap).toBeUndefined();
  });

  it('adds the values past the day’s cap to (other), which then says its count is a lower bound', () => {
    const { by_tag } = assembleSummary(period, [
      taggedDay('2026-11-21', [
        ['team', 'search', 5],
        ['team', '(other)', 7],
      ]),
    ]);
    expect(by_tag.team['(other)']).toMatchObject({ requests: 1, cost_nanos: 7, other: 0, past_daily_cap: true });
    expect(by_tag.team.search.cost_nanos).toBe(5);
  });

  it('lists the 20 costliest keys of a period longer than a day, and counts the ones left out', () => {
    const days = Array.from({ length: 3 }, (_, d) =>
      taggedDay(
        `2026-11-2${d}`,
        Array.from({ length: 10 }, (_, k): [string, string, number] => [`k${d}-${k}`, 'v', d * 10 + k]),
      ),
    );
    const summary = assembleSummary(period, days);
    expect(Object.keys(summary.by_tag)).toHaveLength(MAX_LISTED_TAG_KEYS);
    expect(summary.tag_keys_not_listed).toBe(10);
    // Day 0's keys were the cheapest.
    expect(Object.keys(summary.by_tag).some((key) => key.startsWith('k0-'))).toBe(false);
    expect(assembleSummary(period, days.slice(0, 2)).tag_keys_not_listed).toBeUndefined();
  });
});
