import { createHash } from 'node:crypto';
import {
  hashSecret,
  newAccountId,
  newToken,
  parseToken,
  secretsEqual,
  TOKEN_PREFIX,
} from '../../../lambda/auth/proxy-token';

const ACCOUNT = 'abcdefghij012345';
const KEY = 'k0k1k2k3';
const SECRET = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
const GOOD = `sk-proxy-${ACCOUNT}_${KEY}_${SECRET}`;

describe('proxy token format', () => {
  it('newToken → parseToken round trips and names its account', () => {
    for (let i = 0; i < 200; i++) {
      const accountId = newAccountId();
      const { token, parsed } = newToken(accountId);
      expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
      expect(parseToken(token)).toEqual(parsed);
      expect(parsed.accountId).toBe(accountId);
      expect(parsed.tokenId.startsWith(`${accountId}_`)).toBe(true);
      expect(token).toBe(`${TOKEN_PREFIX}${parsed.tokenId}_${parsed.secret}`);
    }
  });

  it('a hand-written well-formed token parses into its parts', () => {
    expect(parseToken(GOOD)).toEqual({ accountId: ACCOUNT, tokenId: `${ACCOUNT}_${KEY}`, secret: SECRET });
  });

  it('ids and secrets are fresh and use their whole alphabets', () => {
    const ids = Array.from({ length: 300 }, newAccountId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.join('')).size).toBe(36);
    const secrets = Array.from({ length: 300 }, () => newToken(ACCOUNT).parsed.secret);
    expect(new Set(secrets).size).toBe(secrets.length);
    expect(new Set(secrets.join('')).size).toBe(62);
  });

  const malformed: [string, string][] = [
    ['empty', ''],
    ['prefix only', 'sk-proxy-'],
    ['wrong prefix', `sk-proxx-${ACCOUNT}_${KEY}_${SECRET}`],
    ['a provider key', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz'],
    ['upper-case prefix', `SK-PROXY-${ACCOUNT}_${KEY}_${SECRET}`],
    ['account id too short', `sk-proxy-${ACCOUNT.slice(1)}_${KEY}_${SECRET}`],
    ['account id too long', `sk-proxy-${ACCOUNT}x_${KEY}_${SECRET}`],
    ['token key too short', `sk-proxy-${ACCOUNT}_${KEY.slice(1)}_${SECRET}`],
    ['token key too long', `sk-proxy-${ACCOUNT}_${KEY}9_${SECRET}`],
    ['secret too short', `sk-proxy-${ACCOUNT}_${KEY}_${SECRET.slice(1)}`],
    ['secret too long', `sk-proxy-${ACCOUNT}_${KEY}_${SECRET}A`],
    ['upper case in the account id', `sk-proxy-${ACCOUNT.toUpperCase()}_${KEY}_${SECRET}`],
    ['a dash in the secret', `sk-proxy-${ACCOUNT}_${KEY}_${SECRET.slice(1)}-`],
    ['an extra separator', `sk-proxy-${ACCOUNT}_${KEY}_${SECRET.slice(1)}_`],
    ['a missing separator', `sk-proxy-${ACCOUNT}${KEY}_${SECRET}`],
    ['leading space', ` ${GOOD}`],
    ['trailing newline', `${GOOD}\n`],
    ['non-ASCII letter', `sk-proxy-${ACCOUNT.slice(1)}é_${KEY}_${SECRET}`],
  ];

  it.each(malformed)('rejects %s', (_title, token) => {
    expect(parseToken(token)).toBeUndefined();
  });
});

describe('secret hashing and comparison', () => {
  it('hashSecret is the SHA-256 hex of the secret', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret(SECRET)).toBe(createHash('sha256').update(SECRET).digest('hex'));
  });

  it('secretsEqual compares any two strings, of any length, without throwing', () => {
    expect(secretsEqual('admin-key-1234567890', 'admin-key-1234567890')).toBe(true);
    expect(secretsEqual('admin-key-1234567890', 'admin-key-1234567891')).toBe(false);
    expect(secretsEqual('short', 'a much longer string than the first')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
    expect(secretsEqual('', 'x')).toBe(false);
    expect(secretsEqual('ключ😀', 'ключ😀')).toBe(true);
  });
});
