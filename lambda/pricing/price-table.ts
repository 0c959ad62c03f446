import type { Usage } from '../providers/usage';
import { findInCatalog, toolCountersOf } from './catalog';
import { costPico, picoToNanos, ratesAt, type PricePeriod, type ToolCounters } from './rates';

/** What a row's `price_source` says for prices from `PRICING_FILE`. */
export const PRICING_FILE_SOURCE = 'PRICING_FILE';
/** What a row's `price_source` says for a price an account set itself (account-prices/). */
export const ACCOUNT_PRICE_SOURCE = 'custom';

/** One model's prices from `PRICING_FILE`. */
export interface OverrideEntry {
  periods: PricePeriod[];
  /**
   * Also prices ids that continue the key after `-`, `:` or `@` (`my-model`
   * prices `my-model-2025-01-01`), longest key first. LiteLLM's keys are exact ids, so its entries don't.
   */
  prefix: boolean;
}

/** `PRICING_FILE` entries: for every provider, or for one (by proxy provider id). */
export interface Overrides {
  all: Map<string, OverrideEntry>;
  byProvider: Map<string, Map<string, OverrideEntry>>;
}

export const NO_OVERRIDES: Overrides = { all: new Map(), byProvider: new Map() };

export interface Cost {
  /** Cost in nano-dollars (1e-9 USD), rounded once per request. */
  nanos: number;
  priced: boolean;
  /** Where the price came from: `genai-prices@<version>` or `PRICING_FILE`; absent when unpriced. */
  source?: string;
}

export interface PriceContext {
  /** The proxy's provider id (`prov-a` …): prices are looked up with the provider that served the request. */
  provider: string;
  /** When the request was made (epoch ms), for prices that changed on a date; default now. */
  at?: number;
}

interface Priced {
  periods: PricePeriod[];
  source: string;
  /** How the provider's usage names the tool calls the price data prices. */
  toolCounters: ToolCounters;
}

/** Distinct (provider, model) pairs remembered; past it the memo starts over, so memory stays bounded. */
const MEMO_LIMIT = 4_096;
const PREFIX_BOUNDARY = /[-:@]/;

/**
 * Prices a request: `PRICING_FILE` first (the operator's word), then the built-in
 * data for the provider that served it. Lookups are remembered per (provider, model).
 */
export class PriceTable {
  private readonly memo = new Map<string, Priced | null>();

  constructor(
    private readonly catalogProviderOf: (provider: string) => string | undefined,
    private readonly overrides: Overrides = NO_OVERRIDES,
  ) {}

  lookup(provider: string, model: string): Priced | undefined {
    const key = `${provider}\u0000${model}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known ?? undefined;
    const found = this.find(provider, model) ?? null;
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(key, found);
    return found ?? undefined;
  }

  /** Whether the model, served by this provider, has a price (from `PRICING_FILE` or the built-in data). */
  has(provider: string, model: string): boolean {
    return this.lookup(provider, model) !== undefined;
  }

  cost(model: string | undefined, usage: Usage, context: PriceContext): Cost {
    const priced = model ? this.lookup(context.provider, model) : undefined;
    if (!priced) return { nanos: 0, priced: false };
    const rates = ratesAt(priced.periods, context.at ?? Date.now());
    return { nanos: picoToNanos(costPico(rates, usage, priced.toolCounters)), priced: true, source: priced.source };
  }

  private find(provider: string, model: string): Priced | undefined {
    const id = model
      .trim()
      .toLowerCase()
      .replace(/^models\//, '');
    const scoped = this.overrides.byProvider.get(provider);
    const override =
      (scoped && exact(scoped, id)) ??
      exact(this.overrides.all, id) ??
      (scoped && byPrefix(scoped, id)) ??
      byPrefix(this.overrides.all, id);
    const catalogProvider = this.catalogProviderOf(provider);
    const toolCounters = catalogProvider ? toolCountersOf(catalogProvider) : {};
    if (override) return { periods: override.periods, source: PRICING_FILE_SOURCE, toolCounters };
    const found = catalogProvider ? findInCatalog(catalogProvider, model) : undefined;
    return found && { periods: found.periods, source: found.source, toolCounters };
  }
}

function exact(entries: Map<string, OverrideEntry>, id: string): OverrideEntry | undefined {
  return entries.get(id);
}

function byPrefix(entries: Map<string, OverrideEntry>, id: string): OverrideEntry | undefined {
  for (let end = id.length - 1; end > 0; end--) {
    if (!PREFIX_BOUNDARY.test(id[end])) continue;
    const entry = entries.get(id.slice(0, end));
    if (entry?.prefix) return entry;
  }
  return undefined;
}

/** Nano-dollars → dollars for display and the API. */
export function nanosToUsd(nanos: number): number {
  return nanos / 1e9;
}
