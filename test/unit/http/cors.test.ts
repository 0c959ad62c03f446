import { corsHeaders, isAllowedOrigin, preflightHeaders } from '../../../lambda/http/cors';

const ALLOWLIST = ['https://dash.example.com', 'https://admin.example.org/'];

describe('isAllowedOrigin', () => {
  const allowed = [
    'http://localhost',
    'http://localhost:5173',
    'https://localhost:8443',
    'http://LOCALHOST:3000',
    'http://127.0.0.1',
    'http://127.0.0.1:8787',
    'http://[::1]',
    'http://[::1]:3000',
    'https://dash.example.com',
    'https://DASH.example.com',
    'https://admin.example.org',
  ];
  const refused = [
    'http://localhost.evil.com',
    'http://localhost:80.evil.com',
    'http://evil-localhost',
    'http://evillocalhost:3000',
    'http://127.0.0.2',
    'http://127.0.0.1.evil.com',
    'http://[::2]:3000',
    'ftp://localhost',
    'null',
    '',
    'http://dash.example.com',
    'https://dash.example.com.evil.com',
    'https://evil.dash.example.com',
    'https://dash.example.com:8443',
    'https://example.com',
  ];

  it.each(allowed)('allows %s', (origin) => {
    expect(isAllowedOrigin(origin, ALLOWLIST)).toBe(true);
  });

  it.each(refused)('refuses %p', (origin) => {
    expect(isAllowedOrigin(origin, ALLOWLIST)).toBe(false);
  });

  it('refuses a missing origin, and configured domains only when configured', () => {
    expect(isAllowedOrigin(undefined, ALLOWLIST)).toBe(false);
    expect(isAllowedOrigin('https://dash.example.com', [])).toBe(false);
    expect(isAllowedOrigin('http://localhost:1234', [])).toBe(true);
  });
});

describe('CORS response headers', () => {
  it('an allowed origin is echoed with exposed proxy headers and vary', () => {
    const headers = corsHeaders('http://localhost:5173', ALLOWLIST);
    expect(headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(headers.vary).toBe('origin');
    const exposed = headers['access-control-expose-headers'].split(', ');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-proxy-request-id',
        'x-proxy-ratelimit-limit',
        'x-proxy-ratelimit-remaining',
        'x-proxy-ratelimit-reset',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'retry-after',
        'x-proxy-cache',
      ]),
    );
    expect(headers).not.toHaveProperty('access-control-allow-credentials');
  });

  it('any other origin, or none, gets no CORS headers at all', () => {
    expect(corsHeaders('http://localhost.evil.com', ALLOWLIST)).toEqual({});
    expect(corsHeaders(undefined, ALLOWLIST)).toEqual({});
  });

  it('preflight answers an allowed origin with the methods and the headers the SDKs send', () => {
    const headers = preflightHeaders('https://dash.example.com', ALLOWLIST)!;
    expect(headers['access-control-allow-origin']).toBe('https://dash.example.com');
    expect(headers['access-control-allow-methods'].split(', ')).toEqual(
      expect.arrayContaining(['POST', 'GET', 'PUT', 'DELETE', 'OPTIONS']),
    );
    expect(headers['access-control-allow-headers'].split(', ')).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'x-api-key',
        'anthropic-version',
        'anthropic-beta',
        'x-proxy-token',
        'x-proxy-user',
        'x-proxy-cache',
        'cache-control',
      ]),
    );
    expect(Number(headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(headers.vary).toBe('origin');
  });

  it('preflight refuses other origins', () => {
    expect(preflightHeaders('https://evil.example', ALLOWLIST)).toBeUndefined();
  });
});
