import { nanosToUsd } from '../../pricing/price-table';
import { OVERFLOW_VALUE } from '../../tags/tags';
import type {
  DayStats,
  HourStats,
  OtherCount,
  ProviderSlice,
  StatsSummary,
  StatsTotals,
  TagTotals,
} from '../usage-stats';
import { isHourlyPeriod, utcDays, utcHours } from './bucket-keys';
import { addPackedRollup, DimensionSums, type PackedSums } from './dimension-sums';
import { estimatePercentile } from './latency-histogram';
import { addRollup, emptyRollup, rollupIn, type Rollup } from './rollup';

/** The sums of one hour or day of a period, and which one it is. */
export interface TimedSums {
  day: string;
  /** `YYYY-MM-DDTHH`, for an hour. */
  hour?: string;
  sums: PackedSums;
}

/** Tag totals: the figures of a slice without latency, which tag buckets do not keep. */
function toTagTotals(rollup: Rollup): TagTotals {
  return withoutLatency(toTotals(rollup));
}

function withoutLatency(totals: StatsTotals): TagTotals {
  const { latency_avg_ms: _avg, latency_p95_ms: _p95, ...rest } = totals;
  return rest;
}

/** Tag keys `by_tag` lists: the costliest, then busiest, of the period (docs/tags.md, "Stats"). */
export const MAX_LISTED_TAG_KEYS = 20;
/** Values listed per tag key, costliest first; the rest are summed into one `(other)` value. */
export const MAX_LISTED_TAG_VALUES = 10;

/**
 * `by_tag`: key → value → totals for the `MAX_LISTED_TAG_KEYS` costliest keys, each with its
 * `MAX_LISTED_TAG_VALUES` costliest values and one `(other)` value summing the rest (with `other`,
 * and `past_daily_cap` when it holds values the fold counted without their names), keys and values
 * in sorted order; and how many keys were left out.
 */
function byTag(sums: ReadonlyMap<string, ReadonlyMap<string, Rollup>>): {
  byTag: StatsSummary['by_tag'];
  unlistedKeys: number;
} {
  const keys = [...sums].map(([key, values]) => {
    const total = emptyRollup();
    for (const rollup of values.values()) addRollup(total, rollup);
    return { key, ...toTagTotals(total), values };
  });
  const listedKeys = keys.sort(byCostThenRequests((k) => k.key)).slice(0, MAX_LISTED_TAG_KEYS);
  const answer: StatsSummary['by_tag'] = {};
  for (const { key, values } of listedKeys.sort((a, b) => compareText(a.key, b.key))) {
    const entries = listedAndOther(
      [...values]
        .map(([value, rollup]) => ({
          entry: { value, ...toTagTotals(rollup) },
          rollup,
          folded: value === OTHER_LABEL,
        }))
        .sort(byEntry(byCostThenRequests((e) => e.value))),
      (totals, count) => ({ value: OTHER_LABEL, ...withoutLatency(totals), ...count }),
      MAX_LISTED_TAG_VALUES,
    );
    answer[key] = {};
    for (const { value, ...totals } of entries.sort((a, b) => compareText(a.value, b.value)))
      answer[key][value] = totals;
  }
  return { byTag: answer, unlistedKeys: keys.length - listedKeys.length };
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
    unpriced_requests: c.unpriced,
    estimated_requests: c.estimated_requests,
    estimated_input_tokens: c.estimated_input_tokens,
    estimated_output_tokens: c.estimated_output_tokens,
    estimated_cost_nanos: c.estimated_cost_nanos,
    estimated_cost_usd: nanosToUsd(c.estimated_cost_nanos),
    latency_avg_ms: c.requests ? Math.round(c.latency_sum_ms / c.requests) : 0,
    latency_p95_ms: estimatePercentile(rollup.latency, 0.95),
  };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Distinct models, and distinct requesters, listed by name in a summary. Both are the caller's
 * values (any `x-proxy-user`, any model id), so past this many the rest are summed into one entry:
 * the answer's size follows the period, never the number of distinct values.
 */
export const MAX_LISTED_VALUES = 100;

/**
 * The name the entry summing the values past `MAX_LISTED_VALUES` carries; its `other` says how many
 * it sums. The same name as tag values past their cap, and reserved the same way: no request may
 * send it as a requester label or model (pipeline/edge-checks.ts).
 */
export const OTHER_LABEL = OVERFLOW_VALUE;

/**
 * The first `MAX_LISTED_VALUES` entries of a sorted breakdown, and one entry summing all the rest
 * (`other`: how many distinct values it holds by name), so the entries still add up to the totals.
 * Values the fold already counted as `(other)` (past a day's cap, dynamodb/label-caps.ts) join
 * that entry too; their number is not known, so `other` does not count them and the entry says
 * `past_daily_cap` instead.
 */
function listedAndOther<T>(
  sorted: readonly { entry: T; rollup: Rollup; folded: boolean }[],
  otherEntry: (totals: StatsTotals, count: OtherCount) => T,
  listed = MAX_LISTED_VALUES,
): T[] {
  const named = sorted.filter(({ folded }) => !folded);
  const folded = sorted.filter(({ folded }) => folded);
  if (named.length <= listed && folded.length === 0) return named.map(({ entry }) => entry);
  const rest = emptyRollup();
  for (const { rollup } of [...named.slice(listed), ...folded]) addRollup(rest, rollup);
  const unlisted = Math.max(0, named.length - listed);
  const count: OtherCount = { other: unlisted, ...(folded.length > 0 ? { past_daily_cap: true } : {}) };
  return [...named.slice(0, listed).map(({ entry }) => entry), otherEntry(toTotals(rest), count)];
}

/** Costliest first, then busiest; the name breaks ties so the order never depends on read order. */
function byCostThenRequests<T extends TagTotals>(name: (entry: T) => string) {
  return (a: T, b: T) => b.cost_nanos - a.cost_nanos || b.requests - a.requests || compareText(name(a), name(b));
}

function byEntry<T>(compare: (a: T, b: T) => number) {
  return (a: { entry: T }, b: { entry: T }) => compare(a.entry, b.entry);
}

/** Totals per time bucket (a day or an hour), each with its providers, for the stacked charts. */
class TimeBuckets {
  private readonly totals = new Map<string, Rollup>();
  private readonly providers = new Map<string, Map<string, Rollup>>();

  constructor(keys: readonly string[]) {
    for (const key of keys) this.totals.set(key, emptyRollup());
  }

  add(key: string, sums: PackedSums): void {
    addPackedRollup(rollupIn(this.totals, key), sums.total);
    if (!this.providers.has(key)) this.providers.set(key, new Map());
    const providers = this.providers.get(key)!;
    for (const [provider, rollup] of sums.providers) addPackedRollup(rollupIn(providers, provider), rollup);
  }

  entries(): { key: string; totals: StatsTotals; by_provider: Record<string, ProviderSlice> }[] {
    return [...this.totals.entries()]
      .sort(([a], [b]) => compareText(a, b))
      .map(([key, rollup]) => {
        const byProvider: Record<string, ProviderSlice> = {};
        for (const [provider, r] of this.providers.get(key) ?? []) {
          byProvider[provider] = { requests: r.counts.requests, cost_usd: nanosToUsd(r.counts.cost_nanos) };
        }
        return { key, totals: toTotals(rollup), by_provider: byProvider };
      });
  }
}

/**
 * The `GET /api/stats` answer for the (already whole-hour) period, from the sums of the hours and
 * days that make it up. A period of at most two days is made of hours, so it also gets `by_hour`.
 */
export function assembleSummary(period: { from: Date; to: Date }, parts: readonly TimedSums[]): StatsSummary {
  const all = new DimensionSums();
  const days = new TimeBuckets(utcDays(period.from, period.to));
  const hourly = isHourlyPeriod(period.from, period.to);
  const hours = new TimeBuckets(hourly ? utcHours(period.from, period.to) : []);
  for (const part of parts) {
    all.addPacked(part.sums);
    days.add(part.day, part.sums);
    if (hourly && part.hour) hours.add(part.hour, part.sums);
  }
  const { total, providers, models, requesters, tokens, kinds } = all;
  const tags = byTag(all.tags);

  const byDay: DayStats[] = days
    .entries()
    .map(({ key, totals, by_provider }) => ({ day: key, ...totals, by_provider }));
  const byHour: HourStats[] = hours
    .entries()
    .map(({ key, totals, by_provider }) => ({ hour: `${key}:00:00.000Z`, ...totals, by_provider }));

  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    totals: toTotals(total),
    by_day: byDay,
    by_hour: byHour,
    by_provider: [...providers]
      .map(([provider, r]) => ({ provider, ...toTotals(r) }))
      .sort(byCostThenRequests((e) => e.provider)),
    by_model: listedAndOther(
      [...models.values()]
        .map(({ provider, model, rollup }) => ({
          entry: { model, provider, ...toTotals(rollup) },
          rollup,
          folded: model === OTHER_LABEL,
        }))
        .sort(byEntry(byCostThenRequests((e) => `${e.model}\u0000${e.provider}`))),
      (totals, count) => ({ model: OTHER_LABEL, provider: '', ...totals, ...count }),
    ),
    by_requester: listedAndOther(
      [...requesters]
        .map(([requester, rollup]) => ({
          entry: { requester, ...toTotals(rollup) },
          rollup,
          folded: requester === OTHER_LABEL,
        }))
        .sort(byEntry(byCostThenRequests((e) => e.requester))),
      (totals, count) => ({ requester: OTHER_LABEL, ...totals, ...count }),
    ),
    by_token: [...tokens]
      .map(([token_id, r]) => ({ token_id, ...toTotals(r) }))
      .sort(byCostThenRequests((e) => e.token_id)),
    by_kind: [...kinds].map(([kind, r]) => ({ kind, ...toTotals(r) })).sort(byCostThenRequests((e) => e.kind)),
    by_tag: tags.byTag,
    ...(tags.unlistedKeys > 0 ? { tag_keys_not_listed: tags.unlistedKeys } : {}),
  };
}
