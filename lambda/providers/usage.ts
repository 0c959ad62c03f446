/** Token usage normalised across dialects. `inputTokens` always includes cache reads and writes. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of the cache writes, those kept for an hour (Anthropic), priced at their own rate. */
  cacheWrite1hTokens?: number;
}

export const NO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/** Coerces a JSON field to a non-negative integer token count (absent, null or garbage → 0). */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
