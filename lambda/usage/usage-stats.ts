import type { StreamedRow } from './rollups/fold';

/**
 * The figures of one slice of a period. Money is summed in integer nano-dollars
 * (`cost_nanos`, `saved_nanos`) and converted to dollars only once, at the end.
 */
export interface StatsTotals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_nanos: number;
  saved_nanos: number;
  cost_usd: number;
  savings_usd: number;
  /** Requests served from the cache. */
  cache_hits: number;
  /** Requests whose status was 400 or above. */
  errors: number;
  /** Answered requests whose model has no known price: their cost is not in `cost_usd`. */
  unpriced_requests: number;
  /**
   * Requests whose row is marked `usage_estimated` (a stream cut off before the provider reported its
   * usage), and their tokens and cost: the part of the totals above that is estimated
   * (docs/usage-and-pricing.md, "Cut-off streams"); the rest is exact.
   */
  estimated_requests: number;
  estimated_input_tokens: number;
  estimated_output_tokens: number;
  estimated_cost_nanos: number;
  estimated_cost_usd: number;
  latency_avg_ms: number;
  /** Estimated from a log-scale histogram: within one bucket (about 19%) of the exact value. */
  latency_p95_ms: number;
}

/** What a time bucket shows per provider (the stacked charts). */
export type ProviderSlice = { requests: number; cost_usd: number };

export interface DayStats extends StatsTotals {
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Only the providers that had requests that day. */
  by_provider: Record<string, ProviderSlice>;
}

export interface HourStats extends StatsTotals {
  /** Start of the UTC hour, ISO 8601 (`2026-11-21T13:00:00.000Z`). */
  hour: string;
  /** Only the providers that had requests that hour. */
  by_provider: Record<string, ProviderSlice>;
}

export interface TokenStats extends StatsTotals {
  /** "" for usage recorded before tokens were counted. */
  token_id: string;
  /** The token's name, added by `GET /api/stats`; absent when the token no longer exists. */
  name?: string;
}

/** A tag value's figures (docs/tags.md): those of a slice, without latency. */
export type TagTotals = Omit<StatsTotals, 'latency_avg_ms' | 'latency_p95_ms'>;

/** Set only on the entry that sums the values past a breakdown's cut. */
export interface OtherCount {
  /** How many distinct values it holds that the rollups know by name. */
  other?: number;
  /**
   * It also sums rows counted as `(other)` when they were folded, past a day's cap on distinct
   * labels or rollup items (docs/management-api.md): how many values those were is not known, so
   * `other` is a lower bound.
   */
  past_daily_cap?: true;
}

/** The answer of `GET /api/stats`. */
export interface StatsSummary {
  /** The effective period, [from, to): the requested one widened to whole UTC hours. */
  from: string;
  to: string;
  totals: StatsTotals;
  /** Every UTC day the period touches, ascending, quiet days included as zeros. */
  by_day: DayStats[];
  /** Every UTC hour of the period, ascending, when it spans at most two days; otherwise empty. */
  by_hour: HourStats[];
  /** Breakdowns are sorted by cost, then requests, both descending. */
  by_provider: (StatsTotals & { provider: string })[];
  /**
   * At most 100 models by name (rollups/summary.ts, `MAX_LISTED_VALUES`); past that, a last entry
   * `(other)` sums the rest and says how many (`other`).
   */
  by_model: (StatsTotals & { model: string; provider: string } & OtherCount)[];
  /** Requests sent without `x-proxy-user` have requester "". Cut as `by_model` is. */
  by_requester: (StatsTotals & { requester: string } & OtherCount)[];
  /** Per proxy token, so each app's spend shows when each app has its own token. */
  by_token: TokenStats[];
  /** Per endpoint kind (`chat`, `messages`, `responses`, `embeddings`, `count_tokens`, `models`, `other`). */
  by_kind: (StatsTotals & { kind: string })[];
  /**
   * Per tag key, per value: the 20 costliest keys, each with its 10 costliest values and one `(other)`
   * value summing the rest, values past a key's daily cap included (docs/tags.md, "Stats").
   */
  by_tag: Record<string, Record<string, TagTotals & OtherCount>>;
  /** How many tag keys of the period `by_tag` leaves out (only its 20 costliest are listed); absent when none. */
  tag_keys_not_listed?: number;
}

/** The rows of a batch whose rollups could not be written; they must be delivered again. */
export interface FoldOutcome {
  failed: StreamedRow[];
  /**
   * The rows this fold counted for the first time, by their hour's total (the first rollup item a
   * row adds to): over every delivery of a row, it is here exactly once. The usage metrics are
   * written for these.
   */
  counted?: StreamedRow[];
}

/**
 * Rollups of usage rows, so a period's overview never reads the raw rows. They
 * are folded from the usage-logs table's stream, off the request path.
 */
export interface UsageStats {
  /**
   * Adds a batch of streamed rows to their hourly and daily buckets: one
   * conditional ADD per bucket. Idempotent: rows delivered again (a retried or
   * split batch, a second consumer) are not counted twice.
   */
  fold(rows: StreamedRow[]): Promise<FoldOutcome>;
  /**
   * The rows as the stats count them, under the per-day caps on tag keys and values (docs/tags.md,
   * "Stats") and on requester labels and models (`(other)` past the cap): what `fold` counts of
   * each row, and what a rebuild of the rollups from the rows must count too.
   */
  countedValues(rows: StreamedRow[]): Promise<StreamedRow[]>;
  /** Rollup items changed outside a fold (a rebuild from the rows): what was summed of their past hours and days is dropped. */
  markChanged(accountId: string, buckets: readonly string[]): Promise<void>;
  /** Totals for [from, to), widened to whole UTC hours, and the breakdowns of `GET /api/stats`. */
  summarize(accountId: string, from: Date, to: Date): Promise<StatsSummary>;
}
