import type { Scope, TokenRecord } from '../../../lambda/auth/ports';
import { hashSecret } from '../../../lambda/auth/proxy-token';
import { credentialIn, verifyToken } from '../../../lambda/auth/verify';
import { AuthenticationError, PermissionError } from '../../../lambda/base/errors';

/** The one token check, used by the proxy (pipeline/authenticate.ts) and the management API (api/authorize.ts). */
const SECRET = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
const record = (changes: Partial<TokenRecord> = {}): TokenRecord => ({
  accountId: 'abcdefghij012345',
  tokenId: 'abcdefghij012345_k0k1k2k3',
  scopes: ['proxy', 'manage'],
  secretHash: hashSecret(SECRET),
  createdAt: '2026-01-01T00:00:00.000Z',
  ...changes,
});
const outcome = (secret: string, stored: TokenRecord | undefined, scope: Scope) => {
  try {
    return verifyToken(hashSecret(secret), stored, scope);
  } catch (error) {
    return {
      error: (error as Error).constructor.name,
      status: (error as AuthenticationError).status,
      message: (error as Error).message,
    };
  }
};

describe('verifyToken', () => {
  it.each<Scope>(['proxy', 'manage'])('passes a live token with the %s scope and returns its record', (scope) => {
    const stored = record();
    expect(outcome(SECRET, stored, scope)).toBe(stored);
  });

  it('refuses an unknown token or a wrong secret alike, as 401 "Invalid proxy token."', () => {
    const invalid = { error: AuthenticationError.name, status: 401, message: 'Invalid proxy token.' };
    expect(outcome(SECRET, undefined, 'proxy')).toEqual(invalid);
    expect(outcome(`${SECRET.slice(0, -1)}6`, record(), 'proxy')).toEqual(invalid);
    expect(outcome('', record(), 'manage')).toEqual(invalid);
  });

  it.each([
    ['empty', ''],
    ['truncated', hashSecret(SECRET).slice(0, 32)],
    ['longer', `${hashSecret(SECRET)}00`],
    ['not hex', 'z'.repeat(64)],
  ])('refuses (and does not throw anything else) when the stored hash is %s', (_title, secretHash) => {
    expect(outcome(SECRET, record({ secretHash }), 'proxy')).toMatchObject({
      error: AuthenticationError.name,
      message: 'Invalid proxy token.',
    });
  });

  it('tells only the holder of the right secret that the token was revoked', () => {
    const revoked = record({ revokedAt: '2026-01-02T00:00:00.000Z' });
    expect(outcome(SECRET, revoked, 'proxy')).toMatchObject({
      status: 401,
      message: 'This proxy token has been revoked.',
    });
    expect(outcome('x'.repeat(32), revoked, 'proxy')).toMatchObject({ status: 401, message: 'Invalid proxy token.' });
  });

  it('a token without the scope gets a 403 saying what it can do instead', () => {
    expect(outcome(SECRET, record({ scopes: ['manage'] }), 'proxy')).toMatchObject({
      error: PermissionError.name,
      status: 403,
      message: expect.stringContaining('only use the management API'),
    });
    expect(outcome(SECRET, record({ scopes: ['proxy'] }), 'manage')).toMatchObject({
      error: PermissionError.name,
      status: 403,
      message: expect.stringContaining('no "manage" scope'),
    });
  });
});

describe('credentialIn: the one credential-header reader', () => {
  it.each([
    ['Bearer sk-x', 'Bearer', 'sk-x'],
    ['bearer   sk-x  ', 'Bearer', 'sk-x'],
    ['BEARER sk-x', 'Bearer', 'sk-x'],
    ['Basic sk-x', 'Bearer', undefined],
    ['Bearer', 'Bearer', undefined],
    ['Bearersk-x', 'Bearer', undefined],
    ['  sk-x ', undefined, 'sk-x'],
    ['   ', undefined, undefined],
  ] as const)('%j with scheme %s reads %j', (value, scheme, expected) => {
    expect(credentialIn(value, scheme)).toBe(expected);
  });

  it('reads nothing from a missing header', () => {
    expect(credentialIn(undefined, 'Bearer')).toBeUndefined();
    expect(credentialIn(undefined)).toBeUndefined();
  });
});
