/** Entries live 7 days unless the request's `Cache-Control: max-age` says otherwise, and never over 365 days. */
export const DEFAULT_CACHE_TTL_SECONDS = 7 * 24 * 60 * 60;
export const MAX_CACHE_TTL_SECONDS = 365 * 24 * 60 * 60;

const MAX_AGE = /^max-age\s*=\s*"?(\d+)"?$/i;

/**
 * The lifetime of an entry stored for this request, in seconds; 0 means store nothing.
 * Only `max-age` counts: other directives (`no-cache`, `private`, …) are ignored,
 * and a missing or unreadable value falls back to the default rather than failing the request.
 */
export function cacheTtlSeconds(cacheControl: string | undefined): number {
  if (!cacheControl) return DEFAULT_CACHE_TTL_SECONDS;
  for (const directive of cacheControl.split(',')) {
    const match = MAX_AGE.exec(directive.trim());
    if (!match) continue;
    // Digits only, so the number is a non-negative integer (or Infinity for absurd lengths, which the cap handles).
    return Math.min(Number(match[1]), MAX_CACHE_TTL_SECONDS);
  }
  return DEFAULT_CACHE_TTL_SECONDS;
}
