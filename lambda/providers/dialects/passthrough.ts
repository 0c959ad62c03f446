import type { Dialect } from '../types';

/**
 * A path forwarded without knowing its wire format: the body goes up unread
 * (uploads, GETs), the answer comes back as is, never cached. Credentials and
 * error shapes are those of the provider's API style.
 * - `tokens` (any other path): usage is read when the answer happens to carry
 *   it in the style's own shape; otherwise the row has 0 tokens, unpriced.
 * - `free` (token counting, model lists): the provider charges nothing for them,
 *   so the row has 0 tokens and cost 0, priced.
 */
export function passthroughDialect(style: Dialect, billing: Dialect['billing']): Dialect {
  return {
    ...style,
    name: 'passthrough',
    validate: () => ({ ok: true }),
    readResponse: billing === 'free' ? () => ({}) : (body) => style.readResponse(body),
    newStreamReader:
      billing === 'free'
        ? () => ({ onEvent: () => undefined, outcome: () => ({ complete: true }) })
        : () => style.newStreamReader(),
    withoutAddedUsage: (event) => event.raw,
    requestStreamUsage: (_body, raw) => ({ body: raw, added: false }),
    requestBody: 'any',
    cache: undefined,
    billing,
  };
}
