/** Token usage normalised across dialects. `inputTokens` always includes cache reads and writes. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of the cache writes, those kept for an hour (Anthropic), priced at their own rate. */
  cacheWrite1hTokens?: number;
  /**
   * Of the input and output tokens, those that were audio or images (OpenAI's `audio_tokens` and
   * `image_tokens` details: audio models, image generation), each priced at its own rate where the
   * model has one. Absent when the provider reported none.
   */
  media?: MediaTokens;
  /**
   * Server-side tool calls the provider ran and bills per call, by the provider's own counter name
   * (Anthropic's `server_tool_use`: `web_search_requests`, `web_fetch_requests`, …); only counters above 0.
   */
  serverToolUse?: Readonly<Record<string, number>>;
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

/** A provider's per-call counters (`{"web_search_requests": 3}`), kept when above 0; undefined when there are none. */
export function callCounts(value: unknown): Record<string, number> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const counts: Record<string, number> = {};
  for (const [name, count] of Object.entries(value)) if (tokenCount(count) > 0) counts[name] = tokenCount(count);
  return Object.keys(counts).length ? counts : undefined;
}

/** Audio and image tokens, each a part of the input or output tokens. */
export interface MediaTokens {
  audioInput?: number;
  audioOutput?: number;
  imageInput?: number;
  imageOutput?: number;
}

/** The media counts above 0, or undefined when there are none. */
export function mediaTokens(counts: MediaTokens): MediaTokens | undefined {
  const kept = Object.fromEntries(Object.entries(counts).filter(([, count]) => tokenCount(count) > 0));
  return Object.keys(kept).length ? kept : undefined;
}
