/**
 * How many distinct names the stats keep per account and UTC day (label-caps.ts, tag-values.ts);
 * later ones count as `(other)` or are left out. One value so the fold and a rebuild from the table
 * (local/rollup-rebuild.ts, through the same `DynamoUsageStats`) always apply the same caps.
 */
export interface DailyCaps {
  /** Distinct requester labels kept by name. */
  readonly requesters: number;
  /** Distinct model ids kept by name. */
  readonly models: number;
  /**
   * Distinct rollup items (provider, model, requester, token, endpoint kind). The two caps above
   * bound each label, not their pairs: 300 requesters each calling 200 models would be 60,000 items
   * an hour. Past this many, a row counts under `(other)` for both model and requester, so an hour
   * holds at most this many items plus one per provider, token and kind.
   */
  readonly combinations: number;
  /** Distinct tag keys kept (docs/tags.md, "Stats"); later keys are left out of the stats. */
  readonly tagKeys: number;
  /** Distinct values kept per tag key; the rest count as `(other)`. */
  readonly tagValues: number;
}

/**
 * The product's caps: what every deployment and the local server fold with. A test may fold with
 * smaller ones (each still above what a summary lists, usage/rollups/summary.ts) to cross them with
 * fewer rows; nothing in the runtime chooses other caps.
 */
export const DAILY_CAPS: DailyCaps = Object.freeze({
  requesters: 300,
  models: 200,
  combinations: 1_000,
  tagKeys: 20,
  tagValues: 50,
});
