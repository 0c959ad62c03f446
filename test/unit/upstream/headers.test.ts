import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { clientResponseHeaders, upstreamRequestHeaders } from '../../../lambda/upstream/headers';

/** Node 22's zlib decodes all four; the proxy asks for exactly those. */
const ACCEPTED = 'gzip, deflate, br, zstd';

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
  const kept = [
    'content-type',
    'user-agent',
    'accept',
    'anthropic-version',
    'anthropic-beta',
    'openai-organization',
    'openai-project',
    'x-stainless-lang',
  ];

  it('messages style: only the provider key in x-api-key, client headers kept as sent, the rest dropped', () => {
    const headers = upstreamRequestHeaders(client, messagesDialect, 'sk-ant-real');
    const expected: Record<string, string> = { 'x-api-key': 'sk-ant-real', 'accept-encoding': ACCEPTED };
    for (const name of kept) expected[name] = client[name]!;
    expect(headers).toEqual(expected);
  });

  it('chat style: only the provider key as a Bearer authorization', () => {
    const headers = upstreamRequestHeaders(client, chatDialect, 'sk-openai-real');
    expect(headers.authorization).toBe('Bearer sk-openai-real');
    expect(headers).not.toHaveProperty('x-api-key');
    expect(headers['accept-encoding']).toBe(ACCEPTED);
    for (const name of kept) expect(headers[name]).toBe(client[name]);
    expect(Object.keys(headers).sort()).toEqual([...kept, 'authorization', 'accept-encoding'].sort());
  });

  it('the proxy token never appears in any upstream header value', () => {
    for (const dialect of [messagesDialect, chatDialect]) {
      const values = Object.values(upstreamRequestHeaders(client, dialect, 'real-key')).join('\n');
      expect(values).not.toContain('sk-proxy');
    }
  });

  it.each(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key'])(
    'a credential in %s is never forwarded, whatever it holds',
    (name) => {
      for (const dialect of [messagesDialect, chatDialect]) {
        const headers = upstreamRequestHeaders({ [name]: 'Bearer some-other-credential-1234' }, dialect, 'real-key');
        expect(Object.values(headers).join('\n')).not.toContain('some-other-credential-1234');
      }
    },
  );

  it('a header of any name quoting the presented proxy token or its secret part stays with the proxy', () => {
    const token = 'sk-proxy-abcdefghijklmnop_abcdefgh_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef';
    const secret = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef';
    const client = { 'x-custom-auth': `token=${token}`, 'x-secret-only': secret, 'x-harmless': 'kept' };
    const headers = upstreamRequestHeaders(client, chatDialect, 'real-key', true, [token, secret]);
    expect(headers).not.toHaveProperty('x-custom-auth');
    expect(headers).not.toHaveProperty('x-secret-only');
    expect(headers['x-harmless']).toBe('kept');
  });

  it('a missing content-type becomes application/json', () => {
    expect(upstreamRequestHeaders({}, chatDialect, 'k')).toEqual({
      authorization: 'Bearer k',
      'accept-encoding': ACCEPTED,
      'content-type': 'application/json',
    });
  });

  // RFC 9110 7.6.1: a proxy removes the fields a Connection header names, they are hop-by-hop too.
  it('headers named in Connection are dropped as hop-by-hop', () => {
    const headers = upstreamRequestHeaders(
      { connection: 'keep-alive, x-hop-secret', 'x-hop-secret': '1', 'anthropic-version': '2023-06-01' },
      messagesDialect,
      'k',
    );
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
