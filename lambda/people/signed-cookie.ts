import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A value the browser keeps but cannot change: JSON, then an HMAC-SHA-256 over it, both base64url.
 * The key is derived from the deployment's admin key (`cookieKey`), so no other secret is stored,
 * and replacing the admin key ends every session.
 */
export function sealCookieValue(key: Buffer, value: object): string {
  const payload = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload)}`;
}

/** The value, if its signature holds and it has not expired (`exp`, epoch seconds); else undefined. */
export function openCookieValue<T extends { exp: number }>(key: Buffer, sealed: string, now: number): T | undefined {
  const [payload, signature, extra] = sealed.split('.');
  if (!payload || !signature || extra !== undefined) return undefined;
  const expected = Buffer.from(mac(key, payload));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
    return typeof value.exp === 'number' && value.exp * 1000 > now ? value : undefined;
  } catch {
    return undefined;
  }
}

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

/** The kinds of cookie the proxy signs: a person's session, and a sign-in in progress. */
export type CookiePurpose = 'session' | 'sign-in';

/** A key of its own for each use of the admin key, so a cookie of one kind never opens as another. */
export const cookieKey = (adminKey: string, purpose: CookiePurpose) =>
  createHmac('sha256', adminKey).update(`ai-usage-proxy ${purpose} cookie`).digest();

/** One cookie's value from a `Cookie` header; the first of that name wins. */
export function cookieIn(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const equals = part.indexOf('=');
    if (equals > 0 && part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return undefined;
}

/**
 * A `Set-Cookie` value: HttpOnly (no script reads it), Secure (never over plain HTTP, but for the
 * local server on a loopback address, which browsers treat as secure), SameSite=Lax (not sent on a
 * cross-site POST or fetch; sent when the identity provider redirects back).
 */
export function setCookie(name: string, value: string, options: { path: string; maxAgeSeconds: number }): string {
  return `${name}=${value}; Path=${options.path}; Max-Age=${options.maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
}
