import { usageMetricLines } from '../../../lambda/usage/usage-metrics';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { emfProblems } from '../../support/emf-specification';

function row(overrides: Partial<UsageRow> = {}): UsageRow {
  return {
    account_id: 'acc',
    id: 'r',
    ts: '2026-11-28T01:00:00.000Z',
    provider: 'prov-b',
    kind: 'chat',
    model: 'gpt-4o-mini',
    input_tokens: 10,
    output_tokens: 5,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: 0.000002,
    cost_nanos: 2_000,
    priced: true,
    latency_ms: 120,
    status_code: 200,
    cached: false,
    saved_usd: 0,
    saved_nanos: 0,
    stream: false,
    mode: 'stored',
    token_id: 'acc_t',
    ...overrides,
  };
}

test('the validator refuses what the specification refuses', () => {
  const valid = {
    _aws: { Timestamp: 1, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['A']], Metrics: [{ Name: 'M' }] }] },
    A: 'a',
    M: 1,
  };
  expect(emfProblems(JSON.stringify(valid))).toEqual([]);
  const broken = (change: (doc: typeof valid) => unknown) => {
    const copy = structuredClone(valid);
    change(copy);
    return emfProblems(JSON.stringify(copy));
  };
  expect(broken((d) => delete (d._aws as Partial<typeof d._aws>).Timestamp)).not.toEqual([]);
  expect(broken((d) => ((d._aws as { Timestamp: unknown }).Timestamp = '2026-01-01'))).not.toEqual([]);
  expect(broken((d) => delete (d as Partial<typeof d>).A)).not.toEqual([]);
  expect(broken((d) => ((d as { M: unknown }).M = '1'))).not.toEqual([]);
  expect(broken((d) => ((d as { M: unknown }).M = Array.from({ length: 101 }, () => 1)))).not.toEqual([]);
  expect(broken((d) => ((d._aws.CloudWatchMetrics[0].Metrics[0] as { Unit?: string }).Unit = 'Dollars'))).not.toEqual(
    [],
  );
  expect(broken((d) => ((d._aws.CloudWatchMetrics[0] as { Namespace: string }).Namespace = ''))).not.toEqual([]);
});

test('every line of a batch is valid EMF, by provider and model, summing requests, errors, tokens, cost and cache hits', () => {
  const rows = [
    row(),
    row({ status_code: 500, input_tokens: 0, output_tokens: 0, cost_nanos: 0, latency_ms: 40 }),
    row({ cached: true, cost_nanos: 0, input_tokens: 0, output_tokens: 0, latency_ms: 3 }),
    row({ provider: 'prov-a', model: 'claude-sonnet-4-6', cost_nanos: 9_000, latency_ms: 900 }),
    row({ model: 'made-up-model-from-a-client', priced: false, cost_nanos: 0 }),
  ];
  const lines = usageMetricLines(rows);
  for (const line of lines) expect(emfProblems(line)).toEqual([]);
  const docs = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const mini = docs.find((d) => d.Model === 'gpt-4o-mini')!;
  expect(mini).toMatchObject({
    Provider: 'prov-b',
    Requests: 3,
    Errors: 1,
    InputTokens: 10,
    OutputTokens: 5,
    CostUSD: 0.000002,
    CacheHits: 1,
    LatencyMs: [120, 40, 3],
  });
  // A model without a price is not a dimension value of its own: the set of models stays bounded.
  expect(docs.map((d) => d.Model).sort()).toEqual(['(unpriced)', 'claude-sonnet-4-6', 'gpt-4o-mini']);
});

test('more than 100 rows of one model are split so no metric holds more than 100 values', () => {
  const lines = usageMetricLines(Array.from({ length: 250 }, (_, i) => row({ latency_ms: i })));
  expect(lines).toHaveLength(3);
  for (const line of lines) expect(emfProblems(line)).toEqual([]);
  expect(lines.map((line) => (JSON.parse(line) as { Requests: number }).Requests)).toEqual([100, 100, 50]);
});

test("each line carries its rows' own minute, not the time it is written", () => {
  const lines = usageMetricLines([
    row({ ts: '2026-11-28T01:00:59.999Z' }),
    row({ ts: '2026-11-28T01:00:00.000Z' }),
    row({ ts: '2026-11-28T01:07:30.000Z' }),
  ]);
  for (const line of lines) expect(emfProblems(line)).toEqual([]);
  const docs = lines.map((line) => JSON.parse(line) as { _aws: { Timestamp: number }; Requests: number });
  expect(docs.map((d) => [new Date(d._aws.Timestamp).toISOString(), d.Requests])).toEqual([
    ['2026-11-28T01:00:00.000Z', 2],
    ['2026-11-28T01:07:00.000Z', 1],
  ]);
});

test('models an account priced itself share one dimension value, whatever ids the tenant chose', () => {
  const rows = Array.from({ length: 40 }, (_, i) => row({ model: `tenant-model-${i}`, price_source: 'custom' }));
  rows.push(row({ model: 'gpt-4o-mini', price_source: 'PRICING_FILE' }));
  const models = usageMetricLines(rows).map((line) => (JSON.parse(line) as { Model: string }).Model);
  expect(models.sort()).toEqual(['(account-priced)', 'gpt-4o-mini']);
});
