import { ACCOUNT_PRICE_SOURCE } from '../pricing/price-table';
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
 * The model dimension, bounded: a model the built-in prices or `PRICING_FILE` price is one of a
 * finite set the operator controls; a model an account priced itself is named by the tenant, so it
 * is counted as `(account-priced)`; any other name is `(unpriced)`. No request creates a metric.
 */
function modelDimension(row: UsageRow): string {
  if (!row.priced) return '(unpriced)';
  return row.price_source === ACCOUNT_PRICE_SOURCE ? '(account-priced)' : row.model.slice(0, MODEL_CHARS);
}

/** Metrics are kept per minute: a row counts in the minute of its own time. */
const MINUTE_MS = 60_000;
const minuteOf = (row: UsageRow) => Math.floor(Date.parse(row.ts) / MINUTE_MS) * MINUTE_MS;

/**
 * CloudWatch Embedded Metric Format lines for usage rows the fold has just counted (once each over
 * every delivery of a batch): CloudWatch Logs turns each into metrics without an API call. One line
 * per provider, model and minute of the rows' own time (`Timestamp`: that minute) per 100 rows; the
 * latency of each row is one value of `LatencyMs`, so CloudWatch's percentiles are exact.
 */
export function usageMetricLines(rows: readonly UsageRow[]): string[] {
  const groups = new Map<string, UsageRow[]>();
  for (const row of rows) {
    const key = `${row.provider}\u0000${modelDimension(row)}\u0000${minuteOf(row)}`;
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
            Timestamp: minuteOf(chunk[0]),
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
