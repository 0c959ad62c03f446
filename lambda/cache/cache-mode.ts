/**
 * The `x-proxy-cache` request header. Caching is opt-in: without the header
 * nothing is read or written.
 */
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
