import type { Usage } from '../providers/usage';

/**
 * A stream cut off before the provider reported its usage (the client left, the provider went
 * silent or closed): the provider still bills what it generated. Its row then carries an estimate
 * (docs/usage-and-pricing.md, "Cut-off streams"), marked `usage_estimated`.
 */
export interface CutOff {
  /** Characters of text in the request body (every string but the model id). */
  requestChars: number;
  /** Characters of output text the stream delivered before it ended. */
  deliveredChars: number;
}

/** Characters per token of the estimate: the usual rule of thumb for English text and code. */
export const CHARS_PER_TOKEN = 4;

const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/** Deep enough for any real request body; nothing past it is counted. */
const MAX_DEPTH = 64;

/** Characters of every string in a request body except its `model` (messages, system prompt, tools). */
export function requestTextChars(body: unknown): number {
  let chars = 0;
  const walk = (value: unknown, depth: number, key?: string) => {
    if (typeof value === 'string') {
      if (key !== 'model' || depth !== 1) chars += value.length;
    } else if (Array.isArray(value) && depth < MAX_DEPTH) {
      for (const item of value) walk(item, depth + 1);
    } else if (value && typeof value === 'object' && depth < MAX_DEPTH) {
      for (const [name, item] of Object.entries(value)) walk(item, depth + 1, name);
    }
  };
  walk(body, 0);
  return chars;
}

/**
 * What a cut-off stream is billed, as nearly as can be known. A figure the provider reported stays as
 * reported; input it never reported is estimated from the request's text, and output from the text
 * delivered when that is more than the provider's opening figure (Anthropic's `message_start` says 1).
 * `estimated` says whether any figure is an estimate.
 */
export function estimateCutOff(reported: Usage | undefined, cut: CutOff): { usage: Usage; estimated: boolean } {
  const inputTokens = reported?.inputTokens || tokensOf(cut.requestChars);
  const outputTokens = Math.max(reported?.outputTokens ?? 0, tokensOf(cut.deliveredChars));
  const estimated = inputTokens !== (reported?.inputTokens ?? 0) || outputTokens !== (reported?.outputTokens ?? 0);
  if (!estimated && reported) return { usage: reported, estimated: false };
  return {
    usage: {
      ...(reported ?? { cacheReadTokens: 0, cacheWriteTokens: 0 }),
      inputTokens,
      outputTokens,
      cacheReadTokens: reported?.cacheReadTokens ?? 0,
      cacheWriteTokens: reported?.cacheWriteTokens ?? 0,
    },
    estimated,
  };
}
