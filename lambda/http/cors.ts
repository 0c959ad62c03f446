/**
 * Cross-origin requests are answered only for localhost origins (any port) and
 * the configured production domains (docs/errors-and-limits.md, "Limits").
 */
const LOCALHOST = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;

const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  'openai-organization',
  'openai-project',
  'x-proxy-token',
  'x-proxy-user',
  'x-proxy-cache',
  'cache-control',
  'x-stainless-arch',
  'x-stainless-lang',
  'x-stainless-os',
  'x-stainless-package-version',
  'x-stainless-retry-count',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-timeout',
  'x-stainless-helper-method',
].join(', ');

const EXPOSED_HEADERS = [
  'x-proxy-request-id',
  'x-proxy-version',
  'x-proxy-cache',
  'x-proxy-ratelimit-limit',
  'x-proxy-ratelimit-remaining',
  'x-proxy-ratelimit-reset',
  // The provider's own, passed through as sent.
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'request-id',
  'x-request-id',
].join(', ');

export function isAllowedOrigin(origin: string | undefined, allowlist: readonly string[]): boolean {
  if (!origin) return false;
  return (
    LOCALHOST.test(origin) ||
    allowlist.some((allowed) => allowed.replace(/\/+$/, '').toLowerCase() === origin.toLowerCase())
  );
}

/** CORS headers for an allowed origin; none at all for any other. */
export function corsHeaders(origin: string | undefined, allowlist: readonly string[]): Record<string, string> {
  if (!origin || !isAllowedOrigin(origin, allowlist)) return {};
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'origin' };
}

export function preflightHeaders(origin: string, allowlist: readonly string[]): Record<string, string> | undefined {
  if (!isAllowedOrigin(origin, allowlist)) return undefined;
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': 'POST, GET, PUT, DELETE, OPTIONS',
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': '600',
    vary: 'origin',
  };
}
