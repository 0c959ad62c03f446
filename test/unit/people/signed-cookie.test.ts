import { cookieIn, cookieKey, openCookieValue, sealCookieValue } from '../../../lambda/people/signed-cookie';

const NOW = Date.parse('2026-11-29T09:00:00Z');
const value = { role: 'viewer', exp: NOW / 1000 + 60 };

describe('signed cookies (docs/people.md, "The session")', () => {
  it('open under the key that sealed them, until they expire', () => {
    const key = cookieKey('admin-key-0123456789abcdef', 'session');
    const sealed = sealCookieValue(key, value);
    expect(openCookieValue(key, sealed, NOW)).toEqual(value);
    expect(openCookieValue(key, sealed, NOW + 61_000)).toBeUndefined();
  });

  it('do not open once the admin key is replaced, nor as a cookie of the other purpose', () => {
    const sealed = sealCookieValue(cookieKey('admin-key-0123456789abcdef', 'session'), value);
    expect(openCookieValue(cookieKey('admin-key-replaced-0123456', 'session'), sealed, NOW)).toBeUndefined();
    expect(openCookieValue(cookieKey('admin-key-0123456789abcdef', 'sign-in'), sealed, NOW)).toBeUndefined();
  });

  it('refuse any change to what they carry, and anything that is not one', () => {
    const key = cookieKey('admin-key-0123456789abcdef', 'session');
    const [, signature] = sealCookieValue(key, value).split('.');
    const raised = Buffer.from(JSON.stringify({ ...value, role: 'admin' })).toString('base64url');
    for (const forged of [`${raised}.${signature}`, raised, `${raised}.${signature}.x`, '', '.'])
      expect(openCookieValue(key, forged, NOW)).toBeUndefined();
  });

  it('are read by name from a Cookie header', () => {
    expect(cookieIn('a=1; proxy_session=abc.def; b=2', 'proxy_session')).toBe('abc.def');
    expect(cookieIn('xproxy_session=1', 'proxy_session')).toBeUndefined();
    expect(cookieIn(undefined, 'proxy_session')).toBeUndefined();
  });
});
