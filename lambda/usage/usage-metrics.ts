import type { UsageRow } from './usage-row';

/** The CloudWatch namespace of the proxy's metrics (docs/alerts.md, "Metrics"). */
export const METRICS_NAMESPACE = 'AiUsageProxy';

/** Every metric, with its CloudWatch unit; the stack's dashboard and alarm name them from here. */
export const USAGE_METRICS = {
  Requests: 'Count',
  Errors: 'Count',
  InputTokens: 'Count',
  OutputTokens: 'Count',
  CostUSD: 'None',
  CacheHits: 'Count',
  LatencyMs: 'Milliseconds',
} as const;
export type UsageMetric = keyof typeof USAGE_METRICS;

/** The dimension sets: the whole proxy (what the spend alarm watches), per provider, per provider and model. */
export const METRIC_DIMENSIONS = [[], ['Provider'], ['Provider', 'Model']] as const;

/** The specification's limit on the values of one metric in one line. */
const MAX_VALUES = 100;
const MODEL_CHARS = 64;

/**
 * The model dimension, bounded: a priced model is one of the price table's, a finite set; any
 * other name a client or provider sends is counted as `(unpriced)`, so no request creates a metric.
 */
const modelDimension = (row: UsageRow) => (row.priced ? row.model.slice(0, MODEL_CHARS) : '(unpriced)');

/**
 * CloudWatch Embedded Metric Format lines for a batch of usage rows: CloudWatch Logs turns each
 * into metrics without an API call. One line per provider and model per 100 rows; the latency of
 * each row is one value of `LatencyMs`, so CloudWatch's percentiles are exact.
 */
export function usageMetricLines(rows: readonly UsageRow[], now: number): string[] {
  const groups = new Map<string, UsageRow[]>();
  for (const row of rows) {
    const key = `${row.provider}\u0000${modelDimension(row)}`;
    const group = groups.get(key) ?? [];
    group.push(row);
    groups.set(key, group);
  }
  const lines: string[] = [];
  for (const group of groups.values()) {
    for (let start = 0; start < group.length; start += MAX_VALUES) {
      const chunk = group.slice(start, start + MAX_VALUES);
      const sum = (value: (row: UsageRow) => number) => chunk.reduce((total, row) => total + value(row), 0);
      const values: Record<UsageMetric, number | number[]> = {
        Requests: chunk.length,
        Errors: sum((row) => (row.status_code >= 400 ? 1 : 0)),
        InputTokens: sum((row) => row.input_tokens),
        OutputTokens: sum((row) => row.output_tokens),
        CostUSD: sum((row) => row.cost_nanos) / 1e9,
        CacheHits: sum((row) => (row.cached ? 1 : 0)),
        LatencyMs: chunk.map((row) => row.latency_ms),
      };
      lines.push(
        JSON.stringify({
          _aws: {
            Timestamp: now,
            CloudWatchMetrics: [
              {
                Namespace: METRICS_NAMESPACE,
                Dimensions: METRIC_DIMENSIONS,
                Metrics: Object.entries(USAGE_METRICS).map(([Name, Unit]) => ({ Name, Unit })),
              },
            ],
          },
          Provider: chunk[0].provider,
          Model: modelDimension(chunk[0]),
          ...values,
        }),
      );
    }
  }
  return lines;
}
