import { catalogEntry } from '../../providers/catalog';
import type { BucketDimensions } from './bucket-keys';
import { LATENCY_BUCKET_COUNT } from './latency-histogram';
import { addRollup, COUNTERS, emptyRollup, rollupIn, type Rollup } from './rollup';

/** Buckets from before kinds were counted held only the provider's main endpoint: chat, or messages. */
function mainKindOf(provider: string): string {
  return catalogEntry(provider)?.endpoints[0] ?? 'other';
}

/** A model id can be served by two providers; they stay apart. */
export interface ModelSum {
  provider: string;
  model: string;
  rollup: Rollup;
}

/**
 * What a summary sums over some stretch of time, one rollup per value of each breakdown, with no
 * time series: the figures of one hour or day (a sealed summary, period-summaries.ts), or of a
 * whole period once those are added together. Its size follows the distinct values the fold kept
 * by name, which the per-day caps bound (dynamodb/label-caps.ts, dynamodb/tag-values.ts).
 */
export class DimensionSums {
  readonly total = emptyRollup();
  readonly providers = new Map<string, Rollup>();
  readonly models = new Map<string, ModelSum>();
  readonly requesters = new Map<string, Rollup>();
  readonly tokens = new Map<string, Rollup>();
  readonly kinds = new Map<string, Rollup>();
  /** Tag key → value → rollup: a row counts once under each of its tags. */
  readonly tags = new Map<string, Map<string, Rollup>>();

  /** One rollup item of the buckets (bucket-keys.ts): counts once in every breakdown. */
  addSlice(dims: BucketDimensions, rollup: Rollup): void {
    addRollup(this.total, rollup);
    addRollup(rollupIn(this.providers, dims.provider), rollup);
    addRollup(this.modelSum(dims.provider, dims.model), rollup);
    addRollup(rollupIn(this.requesters, dims.requester), rollup);
    addRollup(rollupIn(this.tokens, dims.token), rollup);
    addRollup(rollupIn(this.kinds, dims.kind || mainKindOf(dims.provider)), rollup);
  }

  /** One tag rollup item: it counts only under its tag. */
  addTag(key: string, value: string, rollup: Rollup): void {
    if (!this.tags.has(key)) this.tags.set(key, new Map());
    addRollup(rollupIn(this.tags.get(key)!, value), rollup);
  }

  /** Adds sums in their packed form (a kept summary, or another hour's), without unpacking each rollup first. */
  addPacked(packed: PackedSums): this {
    addPackedRollup(this.total, packed.total);
    const fill = (map: Map<string, Rollup>, entries: readonly [string, number[]][]) => {
      for (const [name, rollup] of entries) addPackedRollup(rollupIn(map, name), rollup);
    };
    fill(this.providers, packed.providers);
    fill(this.requesters, packed.requesters);
    fill(this.tokens, packed.tokens);
    fill(this.kinds, packed.kinds);
    for (const [provider, model, rollup] of packed.models) addPackedRollup(this.modelSum(provider, model), rollup);
    for (const [key, value, rollup] of packed.tags) {
      if (!this.tags.has(key)) this.tags.set(key, new Map());
      addPackedRollup(rollupIn(this.tags.get(key)!, value), rollup);
    }
    return this;
  }

  private modelSum(provider: string, model: string): Rollup {
    const key = JSON.stringify([provider, model]);
    let sum = this.models.get(key);
    if (!sum) this.models.set(key, (sum = { provider, model, rollup: emptyRollup() }));
    return sum.rollup;
  }

  /** The packed form: plain arrays, each rollup as its counters then its histogram, trailing zeros left out. */
  toPacked(): PackedSums {
    const named = (map: Map<string, Rollup>) =>
      [...map].map(([name, rollup]): [string, number[]] => [name, packRollup(rollup)]);
    return {
      total: packRollup(this.total),
      providers: named(this.providers),
      models: [...this.models.values()].map(({ provider, model, rollup }): [string, string, number[]] => [
        provider,
        model,
        packRollup(rollup),
      ]),
      requesters: named(this.requesters),
      tokens: named(this.tokens),
      kinds: named(this.kinds),
      tags: [...this.tags].flatMap(([key, values]) =>
        [...values].map(([value, rollup]): [string, string, number[]] => [key, value, packRollup(rollup)]),
      ),
    };
  }
}

/** `DimensionSums` as plain data: what a kept summary stores (as JSON), and what a period adds up. */
export interface PackedSums {
  total: number[];
  providers: [string, number[]][];
  models: [string, string, number[]][];
  requesters: [string, number[]][];
  tokens: [string, number[]][];
  kinds: [string, number[]][];
  tags: [string, string, number[]][];
}

function packRollup(rollup: Rollup): number[] {
  const packed = [...COUNTERS.map((counter) => rollup.counts[counter]), ...rollup.latency];
  let length = packed.length;
  while (length > 0 && packed[length - 1] === 0) length--;
  return packed.slice(0, length);
}

/** Adds a packed rollup's counters and histogram to a rollup. */
export function addPackedRollup(into: Rollup, packed: readonly number[]): void {
  const counters = Math.min(packed.length, COUNTERS.length);
  for (let i = 0; i < counters; i++) into.counts[COUNTERS[i]] += packed[i];
  for (let i = COUNTERS.length; i < packed.length && i < COUNTERS.length + LATENCY_BUCKET_COUNT; i++)
    into.latency[i - COUNTERS.length] += packed[i];
}
