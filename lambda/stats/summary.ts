import { nanosToUsd } from '../pricing/price-table';
import type { DayStats, StatsSummary, StatsTotals } from '../store/usage-stats';
import type { BucketDimensions } from './bucket-keys';
import { utcDays } from './bucket-keys';
import { estimatePercentile } from './latency-histogram';
import { addRollup, emptyRollup, type Rollup } from './rollup';

/** One rollup item read back: which day and dimensions it counts. */
export interface RollupSlice extends BucketDimensions {
  day: string;
  rollup: Rollup;
}

/** Sums stay in integer nanos; dollars, the average and the p95 are derived here, once. */
export function toTotals(rollup: Rollup): StatsTotals {
  const c = rollup.counts;
  return {
    requests: c.requests,
    input_tokens: c.input_tokens,
    output_tokens: c.output_tokens,
    cache_read_tokens: c.cache_read_tokens,
    cache_write_tokens: c.cache_write_tokens,
    cost_nanos: c.cost_nanos,
    saved_nanos: c.saved_nanos,
    cost_usd: nanosToUsd(c.cost_nanos),
    savings_usd: nanosToUsd(c.saved_nanos),
    cache_hits: c.cache_hits,
    errors: c.errors,
    latency_avg_ms: c.requests ? Math.round(c.latency_sum_ms / c.requests) : 0,
    latency_p95_ms: estimatePercentile(rollup.latency, 0.95),
  };
}

function rollupIn<K>(map: Map<K, Rollup>, key: K): Rollup {
  let rollup = map.get(key);
  if (!rollup) map.set(key, (rollup = emptyRollup()));
  return rollup;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Costliest first, then busiest; the name breaks ties so the order never depends on read order. */
function byCostThenRequests<T extends StatsTotals>(name: (entry: T) => string) {
  return (a: T, b: T) => b.cost_nanos - a.cost_nanos || b.requests - a.requests || compareText(name(a), name(b));
}

/** The `GET /api/stats` answer for the (already whole-hour) period, from the rollup items inside it. */
export function assembleSummary(period: { from: Date; to: Date }, slices: readonly RollupSlice[]): StatsSummary {
  const total = emptyRollup();
  const days = new Map<string, Rollup>(utcDays(period.from, period.to).map((day) => [day, emptyRollup()]));
  const dayProviders = new Map<string, Map<string, Rollup>>();
  const providers = new Map<string, Rollup>();
  const models = new Map<string, { provider: string; model: string; rollup: Rollup }>();
  const requesters = new Map<string, Rollup>();

  for (const slice of slices) {
    addRollup(total, slice.rollup);
    addRollup(rollupIn(days, slice.day), slice.rollup);
    if (!dayProviders.has(slice.day)) dayProviders.set(slice.day, new Map());
    addRollup(rollupIn(dayProviders.get(slice.day)!, slice.provider), slice.rollup);
    addRollup(rollupIn(providers, slice.provider), slice.rollup);
    // A model id can be served by two providers; they stay apart.
    const modelKey = JSON.stringify([slice.provider, slice.model]);
    if (!models.has(modelKey)) models.set(modelKey, { provider: slice.provider, model: slice.model, rollup: emptyRollup() });
    addRollup(models.get(modelKey)!.rollup, slice.rollup);
    addRollup(rollupIn(requesters, slice.requester), slice.rollup);
  }

  const byDay: DayStats[] = [...days.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([day, rollup]) => {
      const byProvider: DayStats['by_provider'] = {};
      for (const [provider, r] of dayProviders.get(day) ?? []) {
        byProvider[provider] = { requests: r.counts.requests, cost_usd: nanosToUsd(r.counts.cost_nanos) };
      }
      return { day, ...toTotals(rollup), by_provider: byProvider };
    });

  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    totals: toTotals(total),
    by_day: byDay,
    by_provider: [...providers].map(([provider, r]) => ({ provider, ...toTotals(r) })).sort(byCostThenRequests((e) => e.provider)),
    by_model: [...models.values()].map(({ provider, model, rollup }) => ({ model, provider, ...toTotals(rollup) })).sort(byCostThenRequests((e) => `${e.model}\u0000${e.provider}`)),
    by_requester: [...requesters].map(([requester, r]) => ({ requester, ...toTotals(r) })).sort(byCostThenRequests((e) => e.requester)),
  };
}
