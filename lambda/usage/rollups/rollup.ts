import type { UsageRow } from '../usage-row';
import {
  addHistogram,
  emptyHistogram,
  LATENCY_BUCKET_COUNT,
  latencyAttribute,
  latencyBucket,
  type LatencyHistogram,
} from './latency-histogram';

/** The counters a rollup item keeps; each is only ever changed by an atomic ADD. */
export const COUNTERS = [
  'requests',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_nanos',
  'saved_nanos',
  'cache_hits',
  'errors',
  'latency_sum_ms',
  'unpriced',
  // Rows whose usage is partly estimated (a cut-off stream), kept apart so exact figures stay known.
  'estimated_requests',
  'estimated_input_tokens',
  'estimated_output_tokens',
  'estimated_cost_nanos',
] as const;

export type Counter = (typeof COUNTERS)[number];

export interface Rollup {
  counts: Record<Counter, number>;
  latency: LatencyHistogram;
}

export function emptyRollup(): Rollup {
  const counts = {} as Record<Counter, number>;
  for (const counter of COUNTERS) counts[counter] = 0;
  return { counts, latency: emptyHistogram() };
}

/** The rollup under `key`, added empty if there is none yet. */
export function rollupIn<K>(map: Map<K, Rollup>, key: K): Rollup {
  let rollup = map.get(key);
  if (!rollup) map.set(key, (rollup = emptyRollup()));
  return rollup;
}

export function addRollup(into: Rollup, from: Rollup): void {
  for (const counter of COUNTERS) into.counts[counter] += from.counts[counter];
  addHistogram(into.latency, from.latency);
}

/** Counts are integers; anything else a row might carry counts as 0 rather than poisoning a sum. */
function whole(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : 0;
}

/** The part of a row's figures that is estimated: all of them for a row marked `usage_estimated`, else none. */
function estimatedIncrements(row: UsageRow) {
  const estimated = row.usage_estimated === true;
  return {
    estimated_requests: estimated ? 1 : 0,
    estimated_input_tokens: estimated ? whole(row.input_tokens) : 0,
    estimated_output_tokens: estimated ? whole(row.output_tokens) : 0,
    estimated_cost_nanos: estimated ? whole(row.cost_nanos) : 0,
  };
}

/** What one row adds to each of its buckets: attribute name → amount. */
export function rowIncrements(row: UsageRow): Record<string, number> {
  const latencyMs = Math.max(0, whole(row.latency_ms));
  const counts: Record<Counter, number> = {
    requests: 1,
    input_tokens: whole(row.input_tokens),
    output_tokens: whole(row.output_tokens),
    cache_read_tokens: whole(row.cache_read_tokens),
    cache_write_tokens: whole(row.cache_write_tokens),
    cost_nanos: whole(row.cost_nanos),
    saved_nanos: whole(row.saved_nanos),
    cache_hits: row.cached ? 1 : 0,
    errors: row.status_code >= 400 ? 1 : 0,
    latency_sum_ms: latencyMs,
    // Answered, not from the cache, and no price known: its cost is missing from the sums, not zero.
    unpriced: row.priced === false && row.status_code < 400 && !row.cached ? 1 : 0,
    ...estimatedIncrements(row),
  };
  return { ...counts, [latencyAttribute(latencyBucket(latencyMs))]: 1 };
}

/** What one row adds to each of its tag buckets: the counters without the latency histogram, which a tag breakdown does not show. */
export function tagIncrements(row: UsageRow): Record<string, number> {
  const { latency_sum_ms: _latency, ...counts } = rowIncrements(row);
  return Object.fromEntries(
    Object.entries(counts).filter(([attribute]) => (COUNTERS as readonly string[]).includes(attribute)),
  );
}

/** A stored rollup item back into counters; attributes it never had are 0. */
export function rollupFromItem(item: Record<string, unknown>): Rollup {
  const rollup = emptyRollup();
  for (const counter of COUNTERS) rollup.counts[counter] = whole(item[counter]);
  for (let i = 0; i < LATENCY_BUCKET_COUNT; i++) rollup.latency[i] = whole(item[latencyAttribute(i)]);
  return rollup;
}
