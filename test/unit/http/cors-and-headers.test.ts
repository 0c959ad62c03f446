import { corsHeaders, isAllowedOrigin, preflightHeaders } from '../../../lambda/http/cors';
import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { clientResponseHeaders, upstreamRequestHeaders } from '../../../lambda/upstream/headers';

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
    expect(exposed).toEqual(expect.arrayContaining(['x-proxy-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-proxy-cache']));
    expect(headers).not.toHaveProperty('access-control-allow-credentials');
  });

  it('any other origin, or none, gets no CORS headers at all', () => {
    expect(corsHeaders('http://localhost.evil.com', ALLOWLIST)).toEqual({});
    expect(corsHeaders(undefined, ALLOWLIST)).toEqual({});
  });

  it('preflight answers an allowed origin with the methods and the headers the SDKs send', () => {
    const headers = preflightHeaders('https://dash.example.com', ALLOWLIST)!;
    expect(headers['access-control-allow-origin']).toBe('https://dash.example.com');
    expect(headers['access-control-allow-methods'].split(', ')).toEqual(expect.arrayContaining(['POST', 'GET', 'PUT', 'DELETE', 'OPTIONS']));
    expect(headers['access-control-allow-headers'].split(', ')).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'x-proxy-token', 'x-proxy-user', 'x-proxy-cache', 'cache-control']),
    );
    expect(Number(headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(headers.vary).toBe('origin');
  });

  it('preflight refuses other origins', () => {
    expect(preflightHeaders('https://evil.example', ALLOWLIST)).toBeUndefined();
  });
});

describe('upstreamRequestHeaders', () => {
  const client: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'user-agent': 'Anthropic/JS 0.60.0',
    accept: 'application/json',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'prompt-caching-2024-07-31',
    'openai-organization': 'org-123',
    'openai-project': 'proj_456',
    'x-stainless-lang': 'js',
    'x-proxy-token': 'sk-proxy-secret',
    'x-proxy-user': 'alice',
    'x-proxy-cache': 'true',
    authorization: 'Bearer sk-proxy-from-client',
    'x-api-key': 'sk-proxy-from-client',
    connection: 'keep-alive',
    'keep-alive': 'timeout=5',
    'proxy-connection': 'keep-alive',
    'proxy-authorization': 'Basic abc',
    'proxy-authenticate': 'Basic',
    te: 'trailers',
    trailer: 'x-checksum',
    'transfer-encoding': 'chunked',
    upgrade: 'h2c',
    host: 'localhost:8787',
    'content-length': '123',
    cookie: 'session=1',
    'accept-encoding': 'gzip, br',
    forwarded: 'for=10.0.0.1',
    via: '1.1 cloudfront',
    'x-forwarded-for': '10.0.0.1',
    'x-forwarded-proto': 'https',
    'x-forwarded-port': '443',
    'x-amzn-trace-id': 'Root=1-abc',
    'x-amzn-tls-version': 'TLSv1.3',
    'x-amz-date': '20250101T000000Z',
    'x-absent': undefined,
  };
  const kept = ['content-type', 'user-agent', 'accept', 'anthropic-version', 'anthropic-beta', 'openai-organization', 'openai-project', 'x-stainless-lang'];

  it('messages style: only the provider key in x-api-key, client headers kept as sent, the rest dropped', () => {
    const headers = upstreamRequestHeaders(client, messagesDialect, 'sk-ant-real');
    const expected: Record<string, string> = { 'x-api-key': 'sk-ant-real', 'accept-encoding': 'identity' };
    for (const name of kept) expected[name] = client[name]!;
    expect(headers).toEqual(expected);
  });

  it('chat style: only the provider key as a Bearer authorization', () => {
    const headers = upstreamRequestHeaders(client, chatDialect, 'sk-openai-real');
    expect(headers.authorization).toBe('Bearer sk-openai-real');
    expect(headers).not.toHaveProperty('x-api-key');
    expect(headers['accept-encoding']).toBe('identity');
    for (const name of kept) expect(headers[name]).toBe(client[name]);
    expect(Object.keys(headers).sort()).toEqual([...kept, 'authorization', 'accept-encoding'].sort());
  });

  it('the proxy token never appears in any upstream header value', () => {
    for (const dialect of [messagesDialect, chatDialect]) {
      const values = Object.values(upstreamRequestHeaders(client, dialect, 'real-key')).join('\n');
      expect(values).not.toContain('sk-proxy');
    }
  });

  it('a missing content-type becomes application/json', () => {
    expect(upstreamRequestHeaders({}, chatDialect, 'k')).toEqual({ authorization: 'Bearer k', 'accept-encoding': 'identity', 'content-type': 'application/json' });
  });

  // RFC 9110 7.6.1: a proxy removes the fields a Connection header names, they are hop-by-hop too.
  it('headers named in Connection are dropped as hop-by-hop', () => {
    const headers = upstreamRequestHeaders({ connection: 'keep-alive, x-hop-secret', 'x-hop-secret': '1', 'anthropic-version': '2023-06-01' }, messagesDialect, 'k');
    expect(headers).not.toHaveProperty('x-hop-secret');
    expect(headers['anthropic-version']).toBe('2023-06-01');
  });
});

describe('clientResponseHeaders', () => {
  it('drops hop-by-hop headers and set-cookie, keeps the useful ones, joins repeats', () => {
    const headers = clientResponseHeaders({
      'content-type': 'text/event-stream; charset=utf-8',
      'retry-after': '20',
      'request-id': 'req_01',
      'x-request-id': 'req_02',
      'anthropic-ratelimit-requests-remaining': '99',
      'openai-processing-ms': '120',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'content-length': '999',
      upgrade: 'h2c',
      trailer: 'x-checksum',
      'set-cookie': ['__cf_bm=abc; path=/', 'other=1'],
      vary: 'Origin',
      'x-multi': ['a', 'b'] as unknown as string,
      'x-absent': undefined,
    });
    expect(headers).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'retry-after': '20',
      'request-id': 'req_01',
      'x-request-id': 'req_02',
      'anthropic-ratelimit-requests-remaining': '99',
      'openai-processing-ms': '120',
      'cache-control': 'no-cache',
      vary: 'Origin',
      'x-multi': 'a, b',
    });
  });
});
