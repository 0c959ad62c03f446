/**
 * The text fields a streamed answer delivers its output in: chat deltas' `content`, `reasoning_content` and
 * tool-call `arguments`; messages deltas' `text`, `thinking` and `partial_json`. Read with one pattern
 * over the event's text, without parsing it, so counting costs little per event.
 */
const DELIVERED_FIELD =
  /"(?:content|reasoning_content|reasoning|arguments|text|thinking|partial_json)"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * The characters of output text an event carries (JSON escapes count as written, close enough for an
 * estimate): what the client received of the answer, for a stream that ended before the provider
 * reported its usage (docs/usage-and-pricing.md, "Cut-off streams").
 */
export function deliveredChars(data: string): number {
  let chars = 0;
  for (const match of data.matchAll(DELIVERED_FIELD)) chars += match[1].length;
  return chars;
}
