import type { DocumentClient } from '../../../../lambda/store/dynamodb/document-client';
import type { ProviderId } from '../../../../lambda/providers/registry';
import { DynamoUsageStats } from '../../../../lambda/usage/dynamodb/usage-stats';
import type { UsageRow } from '../../../../lambda/usage/usage-row';
import type { StatsTotals } from '../../../../lambda/usage/usage-stats';
import { createTestTables } from '../../../support/tables';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A small deterministic generator, so a failure can be replayed. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const MODELS: Record<ProviderId, string[]> = {
  'prov-a': ['fam-sonnet-4-6', 'fam-haiku-4-5-20251001'],
  'prov-b': ['fam-4o-mini', 'fam-4o#preview'],
  'prov-c': ['fam-2.5-flash'],
  'prov-d': ['mistral-small%latest'],
  'prov-e': ['llama-3.1-8b-instant'],
  bedrock: ['us.anthropic.claude-sonnet-4-6', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x'],
};
export const REQUESTERS = [undefined, 'alice', 'bob#ops', '100% team'];
export const TOKENS = ['acc_app1', 'acc_app2', 'acc_app3'];

export const QUIET: Omit<UsageRow, 'account_id' | 'id' | 'ts'> = {
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
export function makeRow(accountId: string, ts: number, overrides: Partial<UsageRow> = {}): UsageRow {
  return { ...QUIET, account_id: accountId, id: `row-${++sequence}`, ts: new Date(ts).toISOString(), ...overrides };
}

/** Ordinary, cached and failed requests over many providers, models, requesters, hours and days. */
export function generateRows(accountId: string, count: number, start: number, end: number, seed: number): UsageRow[] {
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
export async function addAll(stats: DynamoUsageStats, rows: UsageRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const batch = rows
      .slice(i, i + 100)
      .map((row) => ({ row, lineage: 'shard-summaries', sequence: String(++streamPosition).padStart(21, '0') }));
    expect((await stats.fold(batch)).failed).toEqual([]);
  }
}

/** The exact figures, summed straight from the rows. */
export function sums(rows: UsageRow[]) {
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
export function estimatedSums(rows: UsageRow[]) {
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
export function expectP95Close(totals: StatsTotals, rows: UsageRow[]): void {
  if (rows.length === 0) return expect(totals.latency_p95_ms).toBe(0);
  const sorted = rows.map((r) => r.latency_ms).sort((a, b) => a - b);
  const exact = sorted[Math.ceil(0.95 * sorted.length) - 1];
  expect(Math.abs(totals.latency_p95_ms - exact)).toBeLessThanOrEqual(exact * (2 ** 0.25 - 1) + 0.5);
}

export function groupBy(rows: UsageRow[], key: (r: UsageRow) => string): Map<string, UsageRow[]> {
  const groups = new Map<string, UsageRow[]>();
  for (const row of rows) groups.set(key(row), [...(groups.get(key(row)) ?? []), row]);
  return groups;
}

export function expectBreakdown<T extends StatsTotals>(
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
export function countingQueries(doc: DocumentClient) {
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

/**
 * Fresh tables for the file, and the usage stats over them: created before its tests, the client
 * closed after them. The fields are set once `beforeAll` has run.
 */
export function statsOnFreshTables() {
  const store = {} as { stats: DynamoUsageStats; doc: DocumentClient; table: string };
  let destroy = () => {};
  beforeAll(async () => {
    const { clients, tables } = await createTestTables();
    store.doc = clients.doc;
    store.table = tables.usageStats;
    store.stats = new DynamoUsageStats(store.doc, store.table);
    destroy = () => clients.raw.destroy();
  });
  afterAll(() => destroy());
  return store;
}
