import type { Dialect } from '../providers/types';
import { cacheKey } from './cache-key';
import { CACHE_HEADER, isInvalidCacheMode, parseCacheMode, type CacheMode } from './cache-mode';
import { cacheTtlSeconds } from './cache-ttl';

/** What a request asks of the cache, read from its headers and body without any I/O. */
export interface CacheRequest {
  mode: CacheMode;
  /** The `x-proxy-cache` value when it is none of the accepted ones: the request is refused (400) at validation. */
  invalidValue?: string;
  /** The entry this request reads or writes; absent when it can't use the cache (see `readCacheRequest`). */
  key?: string;
  /** Asked for the cache, but its answer depends on state the provider keeps: never read nor stored (`x-proxy-cache: BYPASS`). */
  bypass: boolean;
  /** How long an entry stored for this request lives; 0 stores nothing. */
  ttlSeconds: number;
}

export interface CacheRequestInput {
  headers: Record<string, string | undefined>;
  /** The account of the proxy token presented: entries never cross accounts, and a request without one has none. */
  accountId?: string;
  provider: string;
  dialect: Dialect;
  /** The parsed body, when it is a JSON object that passed validation. */
  body?: Record<string, unknown>;
  /** The body's text as sent, so numbers are keyed as written. */
  bodyText?: string;
  /** The headers that will reach the provider (its credential aside): each is in the key unless on the ignore list. */
  forwardedHeaders?: Readonly<Record<string, string>>;
  /** The query string that will reach the provider (a proxy token quoted in it removed): all of it is in the key. */
  forwardedQuery?: string;
  /** The model the path names, for providers whose model sits there. */
  model?: string;
  /** Pass-through mode: the caller's own provider key (a hit requires the same one). */
  passThroughKey?: string;
}

/**
 * The request's cache settings. A key exists only when the mode isn't `off`, a proxy
 * token names the account, and the endpoint's dialect has a cache namespace that
 * allows this body (docs/caching.md).
 */
export function readCacheRequest({
  headers,
  accountId,
  provider,
  dialect,
  body,
  bodyText,
  forwardedHeaders,
  forwardedQuery,
  model,
  passThroughKey,
}: CacheRequestInput): CacheRequest {
  const parsed = parseCacheMode(headers[CACHE_HEADER]);
  const invalidValue = isInvalidCacheMode(parsed) ? parsed.invalid : undefined;
  const mode = isInvalidCacheMode(parsed) ? 'off' : parsed;
  const namespace = dialect.cache;
  const asked = mode !== 'off' && accountId !== undefined && body !== undefined && namespace !== undefined;
  const bypass = asked && !namespace.allowed(body);
  const key =
    asked && !bypass
      ? cacheKey({
          accountId,
          provider,
          kind: namespace.kind,
          body,
          bodyText,
          headers: forwardedHeaders,
          query: forwardedQuery,
          model,
          passThroughKey,
        })
      : undefined;
  return { mode, invalidValue, key, bypass, ttlSeconds: cacheTtlSeconds(headers['cache-control']) };
}

/** The client error for an unreadable `x-proxy-cache` value, with the header as the field at fault. */
export function cacheHeaderProblem(request: CacheRequest): { message: string; param: string } | undefined {
  if (request.invalidValue === undefined) return undefined;
  return {
    message: `${CACHE_HEADER} must be "true", "refresh" or "false", not "${request.invalidValue.slice(0, 40)}".`,
    param: CACHE_HEADER,
  };
}
