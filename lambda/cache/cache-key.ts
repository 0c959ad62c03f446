import { createHash } from 'node:crypto';

export interface CacheKeyInput {
  accountId: string;
  provider: string;
  model: unknown;
  messages: unknown;
}

/**
 * The entry a request may hit: SHA-256 (hex) of the canonical JSON of `{model, messages}`.
 * Every other body field (`max_tokens`, `temperature`, `stream`, …) is ignored for matching.
 * The account and provider prefix the hash so one account never sees another's entries,
 * and they are URI-encoded so a `#` inside an id can't forge another namespace.
 */
export function cacheKey({ accountId, provider, model, messages }: CacheKeyInput): string {
  const digest = createHash('sha256').update(canonicalJson({ model, messages }), 'utf8').digest('hex');
  return `${encodeURIComponent(accountId)}#${encodeURIComponent(provider)}#${digest}`;
}

/**
 * JSON with object keys sorted at every depth and arrays kept in order, so two
 * bodies that differ only in key order produce the same text. Follows
 * `JSON.stringify` for everything else (undefined members are dropped, NaN is null).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === 'function') continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(',')}}`;
}
