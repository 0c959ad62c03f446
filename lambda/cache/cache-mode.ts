/**
 * The `x-proxy-cache` header, both ways: the mode a request asks for, and the
 * status its answer reports. Caching is opt-in: without the header nothing is
 * read or written, and the answer carries no status.
 */
export const CACHE_HEADER = 'x-proxy-cache';

export type CacheMode = 'off' | 'read-write' | 'refresh';

export type ParsedCacheMode = CacheMode | { invalid: string };

const MODES: Record<string, CacheMode> = { false: 'off', true: 'read-write', refresh: 'refresh' };

/** Absent or `false` → off, `true` → read-write, `refresh` → refresh; anything else is a client error (400). */
export function parseCacheMode(headerValue: string | undefined): ParsedCacheMode {
  if (headerValue === undefined) return 'off';
  const mode = MODES[headerValue.trim().toLowerCase()];
  return mode ?? { invalid: headerValue };
}

export function isInvalidCacheMode(mode: ParsedCacheMode): mode is { invalid: string } {
  return typeof mode === 'object';
}

/**
 * `HIT`: answered from the cache. `MISS`, `REFRESH`: forwarded to the provider (and stored when the answer can be).
 * `BYPASS`: forwarded, and never read from nor stored in the cache, because the answer depends on state the
 * provider keeps (`previous_response_id`, `conversation`).
 */
export type CacheStatus = 'HIT' | 'MISS' | 'REFRESH' | 'BYPASS';

const FORWARDED_STATUS: Record<CacheMode, CacheStatus | undefined> = {
  off: undefined,
  'read-write': 'MISS',
  refresh: 'REFRESH',
};

/** The response header for an answer; none when the request did not ask for the cache. */
export function cacheStatusHeader(status: CacheStatus | undefined): Record<string, string> {
  return status ? { [CACHE_HEADER]: status } : {};
}

/** The status of an answer the provider gave: the mode the request asked for, unless the cache had to stay out of it. */
export function forwardedStatus(mode: CacheMode, bypass = false): CacheStatus | undefined {
  return bypass && mode !== 'off' ? 'BYPASS' : FORWARDED_STATUS[mode];
}
