/**
 * An account's own prices (docs/usage-and-pricing.md, "Account prices"): for models the built-in
 * price data does not know (fine-tuned ids, Bedrock application inference profiles, custom or
 * self-hosted models), or that the account pays differently for.
 */
export interface TokenRates {
  /** USD per million tokens, like `PRICING_FILE`. */
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

export type AccountPrice = {
  /** An exact model id, or a prefix ending in one `*` (`ft:gpt-4o:acme:*`); kept lower-case. */
  model: string;
  updated_at: string;
} & ({ rates: TokenRates; priced_as?: undefined } | { priced_as: string; rates?: undefined });

/** The most prices one account keeps: its list is read whole, so its size stays bounded. */
export const MAX_ACCOUNT_PRICES = 200;
/**
 * The longest model id or pattern a price is kept for, in UTF-8 bytes (a Bedrock ARN is about 100): it
 * is part of the price's sort key, which DynamoDB limits to 1,024 bytes, not characters (512 × "模"
 * is 1,536 bytes).
 */
export const MAX_PATTERN_BYTES = 512;

/** A text's length as DynamoDB counts a key: its UTF-8 bytes. */
export const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** How an id and a pattern are compared: without regard to case or surrounding space, as the built-in prices are. */
export function normalModelId(model: string): string {
  return model.trim().toLowerCase();
}

/** Whether the pattern is a prefix (`…*`) rather than an exact id. */
export function isPrefixPattern(pattern: string): boolean {
  return pattern.endsWith('*');
}

/** What is wrong with a pattern, or undefined: one `*` at most, at its end, after at least one character. */
export function patternProblem(pattern: string): string | undefined {
  const star = pattern.indexOf('*');
  if (star === -1) return undefined;
  if (star !== pattern.length - 1) return 'a pattern has one "*", at its end (ft:gpt-4o:acme:*)';
  if (star === 0) return 'a pattern needs at least one character before its "*"';
  return undefined;
}

/**
 * The price an account set for a model: an exact id first; else the longest prefix pattern the
 * id starts with (`ft:gpt-4o:acme:*` beats `ft:*`). Undefined when none applies.
 */
export function findAccountPrice(prices: readonly AccountPrice[], model: string): AccountPrice | undefined {
  const id = normalModelId(model);
  let best: AccountPrice | undefined;
  for (const price of prices) {
    if (!isPrefixPattern(price.model)) {
      if (price.model === id) return price;
      continue;
    }
    const prefix = price.model.slice(0, -1);
    if (id.startsWith(prefix) && (!best || prefix.length > best.model.length - 1)) best = price;
  }
  return best;
}
