import type { Usage } from '../providers/usage';

/** Rates in pico-dollars (1e-12 USD) per token: integers, so sums never drift. */
export interface TokenRates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Rates as people write them: USD per million tokens. */
export interface PriceEntry {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

export interface Cost {
  /** Cost in nano-dollars (1e-9 USD), rounded once per request. */
  nanos: number;
  priced: boolean;
}

const PICO_PER_NANO = 1000;

/** USD per million tokens → pico-dollars per token. */
function picoPerToken(usdPerMillion: number): number {
  return Math.round(usdPerMillion * 1_000_000);
}

export function toRates(entry: PriceEntry): TokenRates {
  const input = picoPerToken(entry.input);
  return {
    input,
    output: picoPerToken(entry.output),
    // Without a separate rate, cached tokens cost what input tokens cost.
    cacheRead: entry.cache_read === undefined ? input : picoPerToken(entry.cache_read),
    cacheWrite: entry.cache_write === undefined ? input : picoPerToken(entry.cache_write),
  };
}

/**
 * Model ids are matched by their longest priced prefix, so a dated
 * `gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`, not `gpt-4o`.
 */
export class PriceTable {
  private readonly rates = new Map<string, TokenRates>();
  private readonly prefixLengths: number[] = [];

  constructor(entries: Record<string, PriceEntry>) {
    for (const [model, entry] of Object.entries(entries)) this.rates.set(model.toLowerCase(), toRates(entry));
    this.prefixLengths = [...new Set([...this.rates.keys()].map((k) => k.length))].sort((a, b) => b - a);
  }

  ratesFor(model: string): TokenRates | undefined {
    const id = model.toLowerCase().replace(/^models\//, '');
    for (const length of this.prefixLengths) {
      if (length > id.length) continue;
      const found = this.rates.get(id.slice(0, length));
      if (found) return found;
    }
    return undefined;
  }

  cost(model: string | undefined, usage: Usage): Cost {
    const rates = model ? this.ratesFor(model) : undefined;
    if (!rates) return { nanos: 0, priced: false };
    const uncachedInput = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
    const pico =
      uncachedInput * rates.input +
      usage.cacheReadTokens * rates.cacheRead +
      usage.cacheWriteTokens * rates.cacheWrite +
      usage.outputTokens * rates.output;
    return { nanos: Math.round(pico / PICO_PER_NANO), priced: true };
  }
}

/** Nano-dollars → dollars for display and the API. */
export function nanosToUsd(nanos: number): number {
  return nanos / 1e9;
}
