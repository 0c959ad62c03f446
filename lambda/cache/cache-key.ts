import { createHash } from 'node:crypto';
import type { CacheKind } from '../providers/types';

export type { CacheKind };

/**
 * The body fields that define the answer, per endpoint kind (docs/caching.md, "The key").
 * Everything else is a generation setting (`max_tokens`, `temperature`, `top_p`,
 * `stream`, `stream_options`, `seed`, `metadata`, `user`, …) and is ignored, so
 * a retry with another limit or a streamed/non-streamed pair still hits.
 * - `system` (messages API), `instructions` (Responses API): the system prompt
 *   lives outside `messages`/`input` there;
 * - `tools`, `tool_choice` and the legacy `functions`/`function_call`: what the
 *   model may call changes what it answers;
 * - `response_format` (chat) and `text` (Responses API, where the output format
 *   lives): a JSON-schema answer is not a prose answer;
 * - `n` (chat): a one-choice answer is not the answer to a three-choice request;
 * - `dimensions`, `encoding_format` (embeddings): they change the vectors returned.
 */
export const ANSWER_FIELDS: Readonly<Record<CacheKind, readonly string[]>> = {
  messages: ['model', 'messages', 'system', 'tools', 'tool_choice'],
  chat: ['model', 'messages', 'tools', 'tool_choice', 'functions', 'function_call', 'response_format', 'n'],
  responses: ['model', 'input', 'instructions', 'tools', 'tool_choice', 'text'],
  embeddings: ['model', 'input', 'dimensions', 'encoding_format'],
};

/**
 * Bumped whenever the set of fields above changes meaning: entries written
 * under another version never match again (they expire by their TTL).
 */
export const CACHE_KEY_VERSION = 'v2';

export interface CacheKeyInput {
  accountId: string;
  provider: string;
  kind: CacheKind;
  /** The parsed request body. */
  body: Record<string, unknown>;
}

/** The answer-defining part of a body: the fields of `ANSWER_FIELDS[kind]` that are present. */
export function answerFields(kind: CacheKind, body: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of ANSWER_FIELDS[kind]) if (body[field] !== undefined) picked[field] = body[field];
  return picked;
}

/**
 * The entry a request may hit: SHA-256 (hex) of the canonical JSON of the
 * answer-defining fields. The account, the provider, the endpoint kind and the
 * key version prefix the hash, so one account never sees another's entries and
 * a chat request never meets a Responses one; they are URI-encoded so a `#`
 * inside an id can't forge another namespace.
 */
export function cacheKey({ accountId, provider, kind, body }: CacheKeyInput): string {
  const digest = createHash('sha256').update(canonicalJson(answerFields(kind, body)), 'utf8').digest('hex');
  return `${encodeURIComponent(accountId)}#${encodeURIComponent(provider)}#${kind}.${CACHE_KEY_VERSION}#${digest}`;
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
