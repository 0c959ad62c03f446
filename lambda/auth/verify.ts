import { AuthenticationError, PermissionError } from '../base/errors';
import type { Scope, TokenRecord } from './ports';
import { secretsEqual } from './proxy-token';

/**
 * The one reading of a credential header: the value as sent or, where the header carries a scheme
 * (`Authorization: Bearer <token>`), what follows the scheme, matched without regard to case.
 */
export function credentialIn(value: string | undefined, scheme?: 'Bearer'): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed || !scheme) return trimmed || undefined;
  return trimmed.toLowerCase().startsWith(`${scheme.toLowerCase()} `)
    ? trimmed.slice(scheme.length + 1).trim() || undefined
    : undefined;
}

/** What each scope's refusal says: which part of the proxy the token may not use, and what it can do instead. */
const MISSING_SCOPE: Record<Scope, string> = {
  proxy: 'This token has no "proxy" scope; it can only use the management API.',
  manage: 'This token has no "manage" scope: it can send proxy requests but not use the management API.',
};

/**
 * The one token check, for the proxy and the management API alike: the stored record exists, the
 * presented secret's hash (hashed once per request, `hashSecret`) matches its own, it is not revoked
 * and it grants `scope`. Only the token's holder (the secret matched) learns that it was revoked.
 */
export function verifyToken(secretHash: string, record: TokenRecord | undefined, scope: Scope): TokenRecord {
  if (!record || !secretsEqual(secretHash, record.secretHash)) throw new AuthenticationError('Invalid proxy token.');
  if (record.revokedAt) throw new AuthenticationError('This proxy token has been revoked.');
  if (!record.scopes.includes(scope)) throw new PermissionError(MISSING_SCOPE[scope]);
  return record;
}
