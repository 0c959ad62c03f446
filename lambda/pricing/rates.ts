import type { Usage } from '../providers/usage';

/** A price as the price data writes it: USD per million tokens, flat or by tier. */
export type PerMillion = number | { base: number; tiers: Array<{ start: number; price: number }> };

/**
 * A rate in integer pico-dollars (1e-12 USD) per token, so sums never drift:
 * every list price with up to six decimals in USD per million tokens is exact.
 * Once a request's input tokens exceed a tier's `above`, that tier's rate applies
 * to all of its tokens of this kind (how long-context prices are billed).
 */
export interface Rate {
  base: number;
  /** Ascending by `above`. */
  tiers: ReadonlyArray<{ above: number; pico: number }>;
}

/** The rates of one model; a missing cache rate means those tokens cost what the next broader kind costs. */
export interface ModelRates {
  input?: Rate;
  output?: Rate;
  cacheRead?: Rate;
  /** Cache writes; for Anthropic, the 5-minute ones (and the 1-hour ones too when `cacheWrite1h` is missing). */
  cacheWrite?: Rate;
  cacheWrite1h?: Rate;
  /** Audio and image tokens of the input and output, where the model prices them apart from text. */
  audioInput?: Rate;
  audioOutput?: Rate;
  imageInput?: Rate;
  imageOutput?: Rate;
  /** Server-side tool calls, in pico-dollars per call, by the price data's unit (`web_searches`). */
  perCall?: Readonly<Record<string, number>>;
}

/** Which price data unit each of a provider's tool-call counters is (`web_search_requests` → `web_searches`). */
export type ToolCounters = Readonly<Record<string, string>>;

/** Prices that apply from a date on (a provider's price change); the last one started wins. */
export interface PricePeriod {
  /** Epoch ms; absent for the first period. */
  from?: number;
  rates: ModelRates;
}

/** USD per thousand calls → pico-dollars per call. */
export function picoPerCall(usdPerThousand: number): number {
  return Math.round(usdPerThousand * 1_000_000_000);
}

/** USD per million tokens → pico-dollars per token. */
export function picoPerToken(usdPerMillion: number): number {
  return Math.round(usdPerMillion * 1_000_000);
}

export function toRate(price: PerMillion): Rate {
  if (typeof price === 'number') return { base: picoPerToken(price), tiers: [] };
  const tiers = [...price.tiers]
    .sort((a, b) => a.start - b.start)
    .map((tier) => ({ above: tier.start, pico: picoPerToken(tier.price) }));
  return { base: picoPerToken(price.base), tiers };
}

function rateAt(rate: Rate, inputTokens: number): bigint {
  let pico = rate.base;
  for (const tier of rate.tiers) if (inputTokens > tier.above) pico = tier.pico;
  return BigInt(pico);
}

/** Of `total` tokens, the `part` that has its own rate (none without one), never more than the total. */
const carved = (rate: Rate | undefined, part: number | undefined, total: number) =>
  rate ? Math.min(part ?? 0, Math.max(0, total)) : 0;

/**
 * The cost of one request in pico-dollars, exact. Each token is priced once, at
 * the most specific rate the model has: cache reads and writes are carved out of
 * the input tokens only where they have their own rate, 1-hour writes out of the
 * cache writes likewise, and audio and image tokens out of the input and output the same way
 * (genai-prices' `input_audio_mtok`, `input_image_mtok`, …). Each server-side tool call the model
 * has a price for is added at that price; a call without one (Anthropic's web fetches are free) costs nothing.
 */
export function costPico(rates: ModelRates, usage: Usage, toolCounters: ToolCounters = {}): bigint {
  const input = usage.inputTokens;
  const cacheRead = rates.cacheRead ? usage.cacheReadTokens : 0;
  const cacheWrite = rates.cacheWrite ? usage.cacheWriteTokens : 0;
  const cacheWrite1h = rates.cacheWrite && rates.cacheWrite1h ? Math.min(usage.cacheWrite1hTokens ?? 0, cacheWrite) : 0;
  const media = usage.media ?? {};
  let uncachedInput = Math.max(0, input - cacheRead - cacheWrite);
  const audioInput = carved(rates.audioInput, media.audioInput, uncachedInput);
  uncachedInput -= audioInput;
  const imageInput = carved(rates.imageInput, media.imageInput, uncachedInput);
  uncachedInput -= imageInput;
  let output = usage.outputTokens;
  const audioOutput = carved(rates.audioOutput, media.audioOutput, output);
  output -= audioOutput;
  const imageOutput = carved(rates.imageOutput, media.imageOutput, output);
  output -= imageOutput;
  const parts: Array<[Rate | undefined, number]> = [
    [rates.input, uncachedInput],
    [rates.audioInput, audioInput],
    [rates.imageInput, imageInput],
    [rates.cacheRead, cacheRead],
    [rates.cacheWrite, cacheWrite - cacheWrite1h],
    [rates.cacheWrite1h, cacheWrite1h],
    [rates.output, output],
    [rates.audioOutput, audioOutput],
    [rates.imageOutput, imageOutput],
  ];
  let pico = 0n;
  for (const [rate, tokens] of parts) if (rate && tokens > 0) pico += BigInt(tokens) * rateAt(rate, input);
  for (const [counter, calls] of Object.entries(usage.serverToolUse ?? {})) {
    const unit = Object.hasOwn(toolCounters, counter) ? toolCounters[counter] : undefined;
    const price = unit && rates.perCall && Object.hasOwn(rates.perCall, unit) ? rates.perCall[unit] : 0;
    if (price > 0 && calls > 0) pico += BigInt(calls) * BigInt(price);
  }
  return pico;
}

/** Pico-dollars → nano-dollars, rounded half up once per request. */
export function picoToNanos(pico: bigint): number {
  return Number((pico + 500n) / 1000n);
}

/** The rates in force at `at` (epoch ms). */
export function ratesAt(periods: readonly PricePeriod[], at: number): ModelRates {
  let chosen = periods[0].rates;
  for (const period of periods) if (period.from === undefined || period.from <= at) chosen = period.rates;
  return chosen;
}
