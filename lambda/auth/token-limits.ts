/**
 * Per-token controls (docs/tags.md, "Per-token limits"): a request rate of its own and a list of
 * the models the token may call. Both live on the token's gate item, so the one call that
 * authenticates a request also brings them, and a change applies to the next request everywhere.
 */
import type { TokenLimits } from './ports';

export type { TokenLimits };

export const MIN_REQUESTS_PER_MINUTE = 1;
/** Eight gate shards of 15,000 each (sliding-minute.ts): 2,000 requests a second. */
export const MAX_REQUESTS_PER_MINUTE = 120_000;
export const MAX_MODEL_ENTRIES = 100;
export const MAX_MODEL_ENTRY_CHARS = 200;

/** Endpoint kinds a model list never blocks: they use no model's tokens. */
const ALWAYS_ALLOWED_KINDS: ReadonlySet<string> = new Set(['models', 'count_tokens']);

/**
 * Whether a request may go ahead under the token's model list. Each entry matches the ids that
 * start with it, so `claude-haiku-` allows every Haiku and `gpt-4.1-mini` its dated versions too.
 * A request that names no model (an upload, a file listing) is refused under a list: the list
 * says what the token may use, and such a request could still reach a provider's default model.
 */
export function modelAllowed(limits: TokenLimits | undefined, kind: string, model: unknown): boolean {
  const list = limits?.models;
  if (!list || ALWAYS_ALLOWED_KINDS.has(kind)) return true;
  return typeof model === 'string' && list.some((entry) => model.startsWith(entry));
}

/** The refusal text: which model, and what the token allows. */
export function modelRefusal(limits: TokenLimits, model: unknown): string {
  const allowed = (limits.models ?? []).map((entry) => JSON.stringify(entry)).join(', ');
  // A model cut short says so (`…`): the error answer scrubs a credential's start before that mark too (SECURITY.md).
  const what =
    typeof model === 'string'
      ? `model ${JSON.stringify(model.length > 200 ? `${model.slice(0, 200)}…` : model)}`
      : 'a request that names no model';
  return `This proxy token may not use ${what}; it is limited to models starting with ${allowed}.`;
}
