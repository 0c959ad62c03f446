import { createHash, createHmac } from 'node:crypto';
import { asObject } from '../base/json';
import type { CacheKind } from '../providers/types';
import { JsonNumber, parseExactJson } from './exact-json';

export type { CacheKind };

/**
 * Why a body field cannot change the answer's content or form, for the few fields the key
 * leaves out (docs/caching.md, "The key"). Every other field — including any a provider adds
 * tomorrow — is part of the key: a field the proxy does not know is answer-shaping until shown
 * otherwise, so an unknown field can cost a miss but never serve a different question's answer.
 */
const REASONS = {
  stream: 'a stored answer is replayed in the form the request asks for (stream or JSON)',
  stream_options:
    'only says how a stream is delivered (usage event, padding); a replayed stream adds the usage event when asked',
  limit: 'the output limit: a retry with another limit still hits',
  sampling: 'sampling randomness: an exact-match cache keeps one answer whatever the randomness asked for',
  end_user: "names the end user for the provider's abuse monitoring",
  metadata: 'tags the provider keeps with the request',
  service_tier: 'which capacity tier (price and latency) serves the request',
  prompt_cache: "routes the provider's own prompt cache",
} as const;

/**
 * Why a request header cannot change the answer, for the few headers that reach the provider yet
 * stay out of the key (docs/caching.md, "Headers"). Every other header the provider receives is
 * part of the key — `anthropic-beta`, `anthropic-version`, `openai-organization`, `openai-project`,
 * `accept`, Bedrock's guardrail and trace headers, and any a provider adds tomorrow. A name ending
 * in `*` stands for every header that starts with what comes before it.
 */
const HEADER_REASONS = {
  telemetry: 'telemetry: the client library, its version, platform, retry count and timeout',
  call_id: 'a new id on every call',
  tracing: 'tracing context',
  lifetime: 'the lifetime of the entry this request stores',
  metadata: 'tags the provider keeps with the request (as the body field `requestMetadata`)',
  service_tier: 'the capacity tier serving it (as `service_tier`, `performanceConfig`)',
} as const;

export const IGNORED_HEADERS: Readonly<Record<string, keyof typeof HEADER_REASONS>> = {
  'user-agent': 'telemetry',
  'x-stainless-*': 'telemetry',
  'amz-sdk-invocation-id': 'call_id',
  'amz-sdk-request': 'call_id',
  'idempotency-key': 'call_id',
  traceparent: 'tracing',
  tracestate: 'tracing',
  baggage: 'tracing',
  'x-client-request-id': 'tracing',
  'cache-control': 'lifetime',
  // InvokeModel's settings that Converse sends in the body, where the key leaves them out too.
  'x-amzn-bedrock-request-metadata': 'metadata',
  'x-amzn-bedrock-service-tier': 'service_tier',
  'x-amzn-bedrock-performanceconfig-latency': 'service_tier',
};

/** The reason a header is left out of the key, in words (for the docs and the tests). */
export function headerIgnoredBecause(name: string): string | undefined {
  const reason = Object.hasOwn(IGNORED_HEADERS, name) ? IGNORED_HEADERS[name] : undefined;
  return reason && HEADER_REASONS[reason];
}

const IGNORED_HEADER_NAMES = new Set(Object.keys(IGNORED_HEADERS).filter((name) => !name.endsWith('*')));
const IGNORED_HEADER_PREFIXES = Object.keys(IGNORED_HEADERS)
  .filter((name) => name.endsWith('*'))
  .map((name) => name.slice(0, -1));

function isIgnoredHeader(name: string): boolean {
  return IGNORED_HEADER_NAMES.has(name) || IGNORED_HEADER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The headers as the key sees them: every one that reaches the provider but the ignored ones (names lower-cased). */
export function keyedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!isIgnoredHeader(lower)) kept[lower] = value;
  }
  return kept;
}

type Reason = keyof typeof REASONS;

// `inferenceConfig` stays in the key: besides the limit and sampling it holds `stopSequences`, which shape the answer.
const CONVERSE_IGNORED: Readonly<Record<string, Reason>> = {
  requestMetadata: 'metadata',
  performanceConfig: 'service_tier',
};
const NATIVE_IGNORED: Readonly<Record<string, Reason>> = {
  max_tokens: 'limit',
  max_gen_len: 'limit',
  temperature: 'sampling',
  top_p: 'sampling',
  top_k: 'sampling',
};

/** The fields each endpoint kind leaves out of the key, each with its reason. */
export const IGNORED_FIELDS: Readonly<Record<CacheKind, Readonly<Record<string, Reason>>>> = {
  messages: {
    stream: 'stream',
    max_tokens: 'limit',
    temperature: 'sampling',
    top_p: 'sampling',
    top_k: 'sampling',
    metadata: 'metadata',
    service_tier: 'service_tier',
  },
  chat: {
    stream: 'stream',
    stream_options: 'stream_options',
    max_tokens: 'limit',
    max_completion_tokens: 'limit',
    temperature: 'sampling',
    top_p: 'sampling',
    user: 'end_user',
    safety_identifier: 'end_user',
    metadata: 'metadata',
    service_tier: 'service_tier',
    prompt_cache_key: 'prompt_cache',
    prompt_cache_retention: 'prompt_cache',
  },
  responses: {
    stream: 'stream',
    stream_options: 'stream_options',
    max_output_tokens: 'limit',
    temperature: 'sampling',
    top_p: 'sampling',
    user: 'end_user',
    safety_identifier: 'end_user',
    metadata: 'metadata',
    service_tier: 'service_tier',
    prompt_cache_key: 'prompt_cache',
    prompt_cache_retention: 'prompt_cache',
  },
  embeddings: { user: 'end_user' },
  // Bedrock (docs/bedrock.md): the model is in the path; InvokeModel takes each model family's own body.
  converse: CONVERSE_IGNORED,
  invoke: NATIVE_IGNORED,
};

/** The reason a field is left out of the key, in words (for the docs and the tests). */
export function ignoredBecause(kind: CacheKind, field: string): string | undefined {
  const reason = Object.hasOwn(IGNORED_FIELDS[kind], field) ? IGNORED_FIELDS[kind][field] : undefined;
  return reason && REASONS[reason];
}

/**
 * Bumped whenever what goes into the key changes meaning: entries written under another
 * version never match again (they expire by their TTL). v3: the whole body but the ignored
 * fields, the path's model, and a keyed hash of a pass-through key. v4: also the headers that
 * reach the provider but the ignored ones, `store`, and numbers as the body writes them. v5: also the
 * query string the provider receives.
 */
export const CACHE_KEY_VERSION = 'v5';

export interface CacheKeyInput {
  accountId: string;
  provider: string;
  kind: CacheKind;
  /** The parsed request body. */
  body: Record<string, unknown>;
  /**
   * The body's JSON text as sent; when given, the key reads the body from it, so each number is
   * keyed by its literal text (`9007199254740993` and `9007199254740992`, `1.0` and `1` differ).
   */
  bodyText?: string;
  /** The request headers that reach the provider (the credential excepted: see `passThroughKey`). */
  headers?: Readonly<Record<string, string>>;
  /**
   * The query string the provider receives, as sent (a proxy token quoted in it already removed): a
   * parameter such as Anthropic's `beta=true` or Azure's `api-version` can change the answer, and the
   * proxy knows none that can't, so every byte of it is in the key.
   */
  query?: string;
  /** The model named in the path, for providers whose model sits there rather than in the body. */
  model?: string;
  /** Pass-through mode: the caller's own provider key. A hit requires the same key. */
  passThroughKey?: string;
}

/** The body as the key sees it: every field but the kind's ignored ones. */
export function keyedFields(kind: CacheKind, body: Record<string, unknown>): Record<string, unknown> {
  const ignored = IGNORED_FIELDS[kind];
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) if (!Object.hasOwn(ignored, field)) kept[field] = value;
  return kept;
}

/**
 * A pass-through key as the cache key holds it: an HMAC keyed by the account and provider, so
 * the key itself is stored nowhere and one account's hash says nothing about another's. A
 * revoked or wrong key then never receives an answer its provider would refuse.
 */
function credentialHash(accountId: string, provider: string, key: string): string {
  return createHmac('sha256', `cache-credential#${accountId}#${provider}`).update(key, 'utf8').digest('hex');
}

/**
 * The entry a request may hit: SHA-256 (hex) of the canonical JSON of the keyed body, the keyed
 * headers, the query string, the path's model and a pass-through key's hash. The account, the provider, the endpoint kind and
 * the key version prefix the hash, so one account never sees another's entries and a chat
 * request never meets a Responses one; they are URI-encoded so a `#` inside an id can't forge
 * another namespace.
 */
export function cacheKey({
  accountId,
  provider,
  kind,
  body,
  bodyText,
  headers,
  query,
  model,
  passThroughKey,
}: CacheKeyInput): string {
  const exactBody = bodyText === undefined ? undefined : exactObject(bodyText);
  const material = {
    body: keyedFields(kind, exactBody ?? body),
    headers: headers && keyedHeaders(headers),
    // No query and an empty one (`…/messages?`) send the provider the same request.
    query: query || undefined,
    path_model: model,
    credential: passThroughKey === undefined ? undefined : credentialHash(accountId, provider, passThroughKey),
  };
  const digest = createHash('sha256').update(canonicalJson(material), 'utf8').digest('hex');
  return `${encodeURIComponent(accountId)}#${encodeURIComponent(provider)}#${kind}.${CACHE_KEY_VERSION}#${digest}`;
}

/** The body read with its numbers' literal text; the parsed body stands in for text that is not one JSON object. */
function exactObject(text: string): Record<string, unknown> | undefined {
  try {
    return asObject(parseExactJson(text));
  } catch {
    return undefined;
  }
}

/**
 * JSON with object keys sorted at every depth and arrays kept in order, so two
 * bodies that differ only in key order produce the same text. Follows
 * `JSON.stringify` for everything else (undefined members are dropped, NaN is null).
 */
export function canonicalJson(value: unknown): string {
  if (value instanceof JsonNumber) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === 'function') continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(',')}}`;
}
