import type { ChartSeries } from '../components/time-chart';
import { utcDaysBetween } from '../period';
import { PROVIDERS, providerColor, providerName } from '../providers';
import type { ProviderSlice, Stats, Totals } from '../types';

/** The overview's charts over one run of buckets: hours for a period of up to two days, else days. */
export interface TimeSeries {
  unit: 'hour' | 'day';
  /** Bucket keys: ISO hour starts or `YYYY-MM-DD` UTC days. */
  keys: string[];
  /** Short, for the axis: "Nov 21" or "2 PM". */
  labels: string[];
  /** Whole, for the legend of the bucket under the pointer: "Nov 21" or "Nov 21, 2:00 PM". */
  titles: string[];
  cost: ChartSeries[];
  requests: ChartSeries[];
  tokens: ChartSeries[];
  latency: ChartSeries[];
}

interface Bucket extends Totals {
  by_provider: Record<string, ProviderSlice>;
}

const TOKEN_COLORS = { in: '#3566c8', out: '#c2571a' };
const LATENCY_COLORS = { avg: '#1b7f6b', p95: '#8a4fb8' };

function dayLabel(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

/** Hours are shown in the viewer's local time. */
function hourLabel(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: 'numeric' });
}

function hourTitle(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  });
}

/** Providers that appear anywhere, known ones in registry order (so each keeps its colour's place in a stack). */
function providersIn(stats: Stats, buckets: Bucket[]): string[] {
  const seen = new Set<string>(stats.by_provider.filter((p) => p.requests > 0).map((p) => p.provider));
  for (const bucket of buckets) for (const id of Object.keys(bucket.by_provider)) seen.add(id);
  const known = PROVIDERS.map((p) => p.id as string).filter((id) => seen.has(id));
  return [...known, ...[...seen].filter((id) => !PROVIDERS.some((p) => p.id === id)).sort()];
}

export function timeSeries(stats: Stats): TimeSeries {
  const hourly = stats.by_hour.length > 0;
  let keys: string[];
  let buckets: Bucket[];
  if (hourly) {
    keys = stats.by_hour.map((h) => h.hour);
    buckets = stats.by_hour;
  } else {
    // Quiet days are zeros, not gaps, even if the server left one out.
    keys = [...new Set([...utcDaysBetween(stats.from, stats.to), ...stats.by_day.map((d) => d.day)])].sort();
    const byDay = new Map(stats.by_day.map((d) => [d.day, d]));
    const zero = Object.fromEntries(Object.keys(stats.totals).map((field) => [field, 0])) as unknown as Totals;
    const empty: Bucket = { ...zero, by_provider: {} };
    buckets = keys.map((day) => byDay.get(day) ?? empty);
  }
  const providers = providersIn(stats, buckets);
  const perProvider = (field: keyof ProviderSlice): ChartSeries[] =>
    providers.map((id) => ({
      label: providerName(id),
      color: providerColor(id),
      values: buckets.map((b) => b.by_provider[id]?.[field] ?? 0),
    }));
  // An hour or day without requests has no latency: a gap in the line, not a fall to zero.
  const latency = (field: 'latency_avg_ms' | 'latency_p95_ms') =>
    buckets.map((b) => (b.requests > 0 ? b[field] : null));
  return {
    unit: hourly ? 'hour' : 'day',
    keys,
    labels: keys.map(hourly ? hourLabel : dayLabel),
    titles: keys.map(hourly ? hourTitle : dayLabel),
    cost: perProvider('cost_usd'),
    requests: perProvider('requests'),
    tokens: [
      { label: 'Input', color: TOKEN_COLORS.in, values: buckets.map((b) => b.input_tokens) },
      { label: 'Output', color: TOKEN_COLORS.out, values: buckets.map((b) => b.output_tokens) },
    ],
    latency: [
      { label: 'Average', color: LATENCY_COLORS.avg, values: latency('latency_avg_ms') },
      { label: 'p95', color: LATENCY_COLORS.p95, values: latency('latency_p95_ms') },
    ],
  };
}
