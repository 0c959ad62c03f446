import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A proxy token is `sk-proxy-<account id>_<token key>_<secret>`. Because it
 * names its account and token, its gate (token-gate.ts), the provider key and
 * the cache entry can all be asked for at once, before the token is verified;
 * nothing is trusted until the secret's hash matches.
 */
export const TOKEN_PREFIX = 'sk-proxy-';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN_PATTERN = /^sk-proxy-([a-z0-9]{16})_([a-z0-9]{8})_([A-Za-z0-9]{32})$/;

export interface ParsedToken {
  accountId: string;
  /** `<account id>_<token key>`: public, shown in the dashboard and used to revoke. */
  tokenId: string;
  secret: string;
}

function randomString(alphabet: string, length: number): string {
  // 256 is a multiple of neither alphabet length; rejection sampling keeps every character equally likely.
  const out: string[] = [];
  const limit = 256 - (256 % alphabet.length);
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out.push(alphabet[byte % alphabet.length]);
    }
  }
  return out.join('');
}

export const newAccountId = () => randomString(ID_ALPHABET, 16);

export function newToken(accountId: string): { token: string; parsed: ParsedToken } {
  const tokenId = `${accountId}_${randomString(ID_ALPHABET, 8)}`;
  const secret = randomString(SECRET_ALPHABET, 32);
  return { token: `${TOKEN_PREFIX}${tokenId}_${secret}`, parsed: { accountId, tokenId, secret } };
}

export function parseToken(token: string): ParsedToken | undefined {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return undefined;
  return { accountId: match[1], tokenId: `${match[1]}_${match[2]}`, secret: match[3] };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The one constant-time comparison of two secrets (or hashes) of any length: both are hashed to equal length first. */
export function secretsEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}
