import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import { statsRoutes } from '../../../lambda/api/stats-routes';
import type { Deps } from '../../../lambda/deps';
import type { IncomingRequest } from '../../../lambda/http/request';
import type { ProviderId } from '../../../lambda/providers/registry';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import type { TokenRecord } from '../../../lambda/auth/ports';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import type { StatsSummary, StatsTotals } from '../../../lambda/usage/usage-stats';
import { createTestTables } from '../../support/tables';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS: Record<ProviderId, string[]> = {
  'prov-a': ['fam-sonnet-4-6', 'fam-haiku-4-5-20251001'],
  'prov-b': ['fam-4o-mini', 'fam-4o#preview'],
  'prov-c': ['fam-2.5-flash'],
  'prov-d': ['mistral-small%latest'],
  'prov-e': ['llama-3.1-8b-instant'],
  bedrock: ['us.anthropic.claude-sonnet-4-6', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x'],
};
const REQUESTERS = [undefined, 'alice', 'bob#ops', '100% team'];
const TOKENS = ['acc_app1', 'acc_app2', 'acc_app3'];

const QUIET: Omit<UsageRow, 'account_id' | 'id' | 'ts'> = {
  ...{
    provider: 'prov-b',
    kind: 'chat',
    model: 'fam-4o-mini',
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
  },
  ...{
    cost_usd: 0,
    cost_nanos: 0,
    saved_usd: 0,
    saved_nanos: 0,
    priced: true,
    latency_ms: 100,
    status_code: 200,
    cached: false,
  },
  ...{ stream: false, mode: 'stored', token_id: 'tok' },
};

let sequence = 0;
function makeRow(accountId: string, ts: number, overrides: Partial<UsageRow> = {}): UsageRow {
  return { ...QUIET, account_id: accountId, id: `row-${++sequence}`, ts: new Date(ts).toISOString(), ...overrides };
}

/** Ordinary, cached and failed requests over many providers, models, requesters, hours and days. */
function generateRows(accountId: string, count: number, start: number, end: number, seed: number): UsageRow[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  return Array.from({ length: count }, () => {
    const provider = pick(Object.keys(MODELS) as ProviderId[]);
    const base = {
      provider,
      model: pick(MODELS[provider]),
      requester: pick(REQUESTERS),
      latency_ms: 20 + Math.floor(next() * 6000),
      token_id: pick(TOKENS),
    };
    const ts = start + Math.floor(next() * (end - start));
    const kind = next();
    if (kind < 0.15) {
      const saved = 1 + Math.floor(next() * 90_000_000);
      return makeRow(accountId, ts, {
        ...base,
        cached: true,
        saved_nanos: saved,
        saved_usd: saved / 1e9,
        latency_ms: 60 + Math.floor(next() * 40),
      });
    }
    if (kind < 0.25)
      return makeRow(accountId, ts, { ...base, status_code: pick([400, 429, 500, 529]), error: 'upstream said no' });
    const input = Math.floor(next() * 20_000);
    const cost = Math.floor(next() * 50_000_000);
    const priced = next() < 0.9;
    return makeRow(accountId, ts, {
      ...base,
      priced,
      input_tokens: input,
      output_tokens: Math.floor(next() * 4_000),
      cache_read_tokens: Math.floor(input * next() * 0.5),
      cache_write_tokens: Math.floor(next() * 100),
      cost_nanos: priced ? cost : 0,
      cost_usd: priced ? cost / 1e9 : 0,
      // About one in ten is a cut-off stream's estimate (without another draw, so the rest stay as they were).
      ...(input % 10 === 0 ? { usage_estimated: true as const } : {}),
    });
  });
}

/** Folds the rows as the stream would deliver them: in order, in batches of 100, on one shard. */
let streamPosition = 0;
async function addAll(stats: DynamoUsageStats, rows: UsageRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const batch = rows
      .slice(i, i + 100)
      .map((row) => ({ row, lineage: 'shard-summaries', sequence: String(++streamPosition).padStart(21, '0') }));
    expect((await stats.fold(batch)).failed).toEqual([]);
  }
}

/** The exact figures, summed straight from the rows. */
function sums(rows: UsageRow[]) {
  const n = (pick: (r: UsageRow) => number) => rows.reduce((total, r) => total + pick(r), 0);
  const costNanos = n((r) => r.cost_nanos);
  const savedNanos = n((r) => r.saved_nanos);
  return {
    requests: rows.length,
    input_tokens: n((r) => r.input_tokens),
    output_tokens: n((r) => r.output_tokens),
    cache_read_tokens: n((r) => r.cache_read_tokens),
    cache_write_tokens: n((r) => r.cache_write_tokens),
    cost_nanos: costNanos,
    saved_nanos: savedNanos,
    cost_usd: costNanos / 1e9,
    savings_usd: savedNanos / 1e9,
    cache_hits: rows.filter((r) => r.cached).length,
    errors: rows.filter((r) => r.status_code >= 400).length,
    unpriced_requests: rows.filter((r) => !r.priced && r.status_code < 400 && !r.cached).length,
    ...estimatedSums(rows.filter((r) => r.usage_estimated)),
    latency_avg_ms: rows.length ? Math.round(n((r) => r.latency_ms) / rows.length) : 0,
  };
}

/** The estimated part: the figures of the rows marked `usage_estimated`. */
function estimatedSums(rows: UsageRow[]) {
  const n = (pick: (r: UsageRow) => number) => rows.reduce((total, r) => total + pick(r), 0);
  return {
    estimated_requests: rows.length,
    estimated_input_tokens: n((r) => r.input_tokens),
    estimated_output_tokens: n((r) => r.output_tokens),
    estimated_cost_nanos: n((r) => r.cost_nanos),
    estimated_cost_usd: n((r) => r.cost_nanos) / 1e9,
  };
}

/** The p95 comes from a log-scale histogram: it must be within one bucket (19%) of the exact value. */
function expectP95Close(totals: StatsTotals, rows: UsageRow[]): void {
  if (rows.length === 0) return expect(totals.latency_p95_ms).toBe(0);
  const sorted = rows.map((r) => r.latency_ms).sort((a, b) => a - b);
  const exact = sorted[Math.ceil(0.95 * sorted.length) - 1];
  expect(Math.abs(totals.latency_p95_ms - exact)).toBeLessThanOrEqual(exact * (2 ** 0.25 - 1) + 0.5);
}

function groupBy(rows: UsageRow[], key: (r: UsageRow) => string): Map<string, UsageRow[]> {
  const groups = new Map<string, UsageRow[]>();
  for (const row of rows) groups.set(key(row), [...(groups.get(key(row)) ?? []), row]);
  return groups;
}

function expectBreakdown<T extends StatsTotals>(
  actual: T[],
  rows: UsageRow[],
  keyOfRow: (r: UsageRow) => string,
  keyOfEntry: (e: T) => string,
): void {
  const expected = groupBy(rows, keyOfRow);
  expect(actual.map(keyOfEntry).sort()).toEqual([...expected.keys()].sort());
  for (const entry of actual) {
    const group = expected.get(keyOfEntry(entry))!;
    expect(entry).toMatchObject(sums(group));
    expectP95Close(entry, group);
  }
  for (let i = 1; i < actual.length; i++) {
    const [a, b] = [actual[i - 1], actual[i]];
    expect(a.cost_nanos > b.cost_nanos || (a.cost_nanos === b.cost_nanos && a.requests >= b.requests)).toBe(true);
  }
}

/** Counts the Query calls and the items they return, by wrapping the real client's `send`. */
function countingQueries(doc: DocumentClient) {
  const seen = { queries: 0, items: 0 };
  const counted = new Proxy(doc, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: Parameters<DocumentClient['send']>[0]) => {
        const output = await (target.send as (c: typeof command) => Promise<{ Items?: unknown[] }>)(command);
        if (command.operation === 'Query') {
          seen.queries++;
          seen.items += output.Items?.length ?? 0;
        }
        return output;
      };
    },
  });
  return { doc: counted, seen };
}

let stats: DynamoUsageStats;
let doc: DocumentClient;
let table: string;
let destroy: () => void;

beforeAll(async () => {
  const { clients, tables } = await createTestTables();
  doc = clients.doc;
  table = tables.usageStats;
  stats = new DynamoUsageStats(doc, table);
  destroy = () => clients.raw.destroy();
});

afterAll(() => destroy());

describe('DynamoUsageStats.summarize over many rows', () => {
  const start = Date.parse('2026-10-25T00:00:00Z');
  const end = Date.parse('2026-11-05T00:00:00Z');
  const rows = generateRows('acc-main', 400, start, end, 42);

  beforeAll(async () => {
    await addAll(stats, rows);
  });

  it('equals the exact sums of the rows in the (hour-widened) period, in total and per day, provider, model and requester', async () => {
    const summary = await stats.summarize(
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
    const summary = await stats.summarize(
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
    const summary = await stats.summarize(
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

describe('period boundaries', () => {
  it('includes a row at from and excludes one just before from and one at to', async () => {
    const from = Date.parse('2026-09-10T13:00:00Z');
    const to = Date.parse('2026-09-12T15:00:00Z');
    const edgeRows = [from - 1, from, to - 1, to].map((ts) => makeRow('acc-edges', ts, { cost_nanos: 1_000 }));
    await addAll(stats, edgeRows);
    const summary = await stats.summarize('acc-edges', new Date(from), new Date(to));
    expect(summary.totals).toMatchObject({ requests: 2, cost_nanos: 2_000 });
    expect(summary.by_day.map((d) => [d.day, d.requests])).toEqual([
      ['2026-09-10', 1],
      ['2026-09-11', 0],
      ['2026-09-12', 1],
    ]);
    // Within one hour: from rounds down and to up, and the answer says so.
    const widened = await stats.summarize('acc-edges', new Date(from + 20 * 60_000), new Date(from + 40 * 60_000));
    expect([widened.from, widened.to, widened.totals.requests]).toEqual([
      '2026-09-10T13:00:00.000Z',
      '2026-09-10T14:00:00.000Z',
      1,
    ]);
  });
});

describe('account isolation', () => {
  it('shows one account nothing of another', async () => {
    await addAll(stats, [
      makeRow('acc-other', Date.parse('2026-10-30T12:00:00Z'), { cost_nanos: 5, requester: 'carol' }),
    ]);
    const fresh = await stats.summarize(
      'acc-fresh',
      new Date('2026-10-20T00:00:00Z'),
      new Date('2026-11-10T00:00:00Z'),
    );
    expect(fresh.totals).toMatchObject(sums([]));
    expect([fresh.by_provider, fresh.by_model, fresh.by_requester]).toEqual([[], [], []]);
    expect(fresh.by_day.every((d) => d.requests === 0)).toBe(true);
    const other = await stats.summarize(
      'acc-other',
      new Date('2026-10-20T00:00:00Z'),
      new Date('2026-11-10T00:00:00Z'),
    );
    expect(other.totals).toMatchObject({ requests: 1, cost_nanos: 5 });
    expect(other.by_requester.map((r) => r.requester)).toEqual(['carol']);
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
    await addAll(stats, busyRows);

    const counting = countingQueries(doc);
    const from = new Date(day0 + DAY + 10 * HOUR);
    const to = new Date(from.getTime() + 30 * DAY);
    const summary: StatsSummary = await new DynamoUsageStats(counting.doc, table).summarize('acc-busy', from, to);

    const inside = busyRows.filter((r) => r.ts >= summary.from && r.ts < summary.to);
    expect(summary.totals).toMatchObject(sums(inside));
    // Per combination: one DAY item for each whole day (2 … 30), the HOUR items of day 1 from 10:00
    // (hours 10+i and 15) and of day 31 before 10:00 (hour 3).
    expect(counting.seen.items).toBe((29 + 2 + 1) * combos.length);
    expect(counting.seen.items).toBeLessThanOrEqual((30 + 46) * combos.length);
    expect(counting.seen.items).toBeLessThan(inside.length / 3);
    // One query per key range (whole days, leading hours, trailing hours), each a single page.
    expect(counting.seen.queries).toBe(3);
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
      usageStats: stats,
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
