/**
 * Where every proxy path leads: endpoint kinds are data in the provider modules,
 * any other path under a provider is forwarded as `other`, and no path can leave
 * the provider's configured base URL.
 */
import fc from 'fast-check';
import { loadConfig } from '../../../lambda/wiring/config';
import { endpointPaths, providerById, resolveProxyPath, upstreamUrl } from '../../../lambda/providers/registry';
import { isSafeSubPath } from '../../../lambda/providers/routes';

function found(path: string, method = 'POST') {
  const result = resolveProxyPath(path, method);
  if (!result || !('found' in result)) throw new Error(`${method} ${path} did not resolve: ${JSON.stringify(result)}`);
  const { provider, endpoint, upstreamPath } = result.found;
  return { provider: provider.id, kind: endpoint.kind, dialect: endpoint.dialect.name, upstreamPath };
}

describe('endpoint kinds', () => {
  const table: [method: string, path: string, provider: string, kind: string, upstreamPath: string][] = [
    ['POST', '/v1/messages', 'prov-a', 'messages', '/v1/messages'],
    ['POST', '/messages', 'prov-a', 'messages', '/v1/messages'],
    ['POST', '/v1/messages/count_tokens', 'prov-a', 'count_tokens', '/v1/messages/count_tokens'],
    ['POST', '/messages/count_tokens', 'prov-a', 'count_tokens', '/v1/messages/count_tokens'],
    ['GET', '/v1/models', 'prov-a', 'models', '/v1/models'],
    ['GET', '/v1/models/claude-sonnet-4-6', 'prov-a', 'other', '/v1/models/claude-sonnet-4-6'],
    ['POST', '/v1/messages/batches', 'prov-a', 'other', '/v1/messages/batches'],
    ['POST', '/prov-a/v1/messages', 'prov-a', 'messages', '/v1/messages'],
    ['GET', '/prov-a/v1/files', 'prov-a', 'other', '/v1/files'],
    ['POST', '/prov-b/v1/responses', 'prov-b', 'responses', '/responses'],
    ['POST', '/prov-b/responses', 'prov-b', 'responses', '/responses'],
    ['GET', '/prov-b/v1/responses/resp_123', 'prov-b', 'other', '/responses/resp_123'],
    ['DELETE', '/prov-b/v1/responses/resp_123', 'prov-b', 'other', '/responses/resp_123'],
    ['POST', '/prov-b/v1/embeddings', 'prov-b', 'embeddings', '/embeddings'],
    ['GET', '/prov-b/v1/models', 'prov-b', 'models', '/models'],
    ['POST', '/prov-b/v1/files', 'prov-b', 'other', '/files'],
    ['POST', '/prov-c/v1/embeddings', 'prov-c', 'embeddings', '/embeddings'],
    ['POST', '/prov-c/v1/responses', 'prov-c', 'other', '/responses'],
    ['POST', '/prov-d/v1/embeddings', 'prov-d', 'embeddings', '/embeddings'],
    ['POST', '/prov-d/v1/responses', 'prov-d', 'other', '/responses'],
    ['POST', '/prov-e/v1/responses', 'prov-e', 'responses', '/responses'],
    ['GET', '/prov-e/models', 'prov-e', 'models', '/models'],
  ];
  it.each(table)('%s %s → %s %s (upstream %s)', (method, path, provider, kind, upstreamPath) => {
    expect(found(path, method)).toMatchObject({ provider, kind, upstreamPath });
  });

  it('each kind has its wire format: its own dialect, or pass-through', () => {
    expect(found('/prov-b/v1/responses').dialect).toBe('responses');
    expect(found('/prov-b/v1/embeddings').dialect).toBe('embeddings');
    expect(found('/prov-b/v1/models', 'GET').dialect).toBe('passthrough');
    expect(found('/v1/messages/count_tokens').dialect).toBe('passthrough');
    expect(found('/prov-b/v1/files').dialect).toBe('passthrough');
  });

  it('an endpoint path with another method is 405 with the allowed one; other paths take any method', () => {
    expect(resolveProxyPath('/prov-b/v1/chat/completions', 'GET')).toEqual({
      wrongMethod: expect.objectContaining({ allowed: 'POST' }),
    });
    expect(resolveProxyPath('/v1/models', 'POST')).toEqual({
      wrongMethod: expect.objectContaining({ allowed: 'GET' }),
    });
    expect(found('/prov-b/v1/files/file-1', 'PATCH').kind).toBe('other');
  });

  it('the endpoint list is derived from the providers', () => {
    expect(endpointPaths()).toEqual(
      expect.arrayContaining([
        'POST /v1/messages',
        'POST /v1/messages/count_tokens',
        'GET /v1/models',
        'POST /prov-b/v1/responses',
        'POST /prov-d/v1/embeddings',
        'GET /prov-e/v1/models',
      ]),
    );
  });
});

describe('no path leaves the provider base', () => {
  const hostile = [
    '/prov-b/v1/../../evil',
    '/prov-b/v1/%2e%2e/admin',
    '/prov-b/v1/a%2fb',
    '/prov-b/v1/a%5Cb',
    '/prov-b/v1/a\\b',
    '/prov-b//evil.example/x',
    '/prov-b/@evil.example/x',
    '/prov-b/v1/x%40evil.example',
    '/prov-b/v1/models%00',
    '/prov-b/v1/x%3Fq=1',
    '/prov-b/v1/x%23frag',
    '/prov-b/v1/x%252e%252e',
    '/prov-a/./v1/messages',
    '/v1/messages/..',
  ];
  it.each(hostile)('%s is refused', (path) => {
    const result = resolveProxyPath(path, 'POST');
    expect(result === undefined || 'unsafe' in result).toBe(true);
  });

  it('unknown first segments reach no provider', () => {
    for (const path of [
      '/prov-x/v1/chat/completions',
      '/http:/127.0.0.1:9/v1/messages',
      '/evil.example/v1/models',
      '/chat/completions',
    ]) {
      expect(resolveProxyPath(path, 'POST')).toBeUndefined();
    }
  });

  it('any path accepted as safe yields a URL on the base host, below the base path', () => {
    const provider = providerById('prov-c')!;
    const segment = fc.stringMatching(/^[A-Za-z0-9\-._~!$&'()*+,;=:%@/\\?#]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.string({ maxLength: 20 }),
        (segments, query) => {
          const path = `/${segments.join('/')}`;
          if (!isSafeSubPath(path)) return;
          const url = upstreamUrl(
            provider,
            loadConfig({}).upstreams['prov-c'].baseUrl,
            path,
            encodeURIComponent(query),
          );
          expect(url.origin).toBe('https://generativelanguage.googleapis.com');
          expect(url.pathname.startsWith('/v1beta/openai/')).toBe(true);
        },
      ),
    );
  });

  it('the query string is forwarded exactly as sent', () => {
    const url = upstreamUrl(
      providerById('prov-a')!,
      loadConfig({ UPSTREAM_BASE_URL_PROV_A: 'http://127.0.0.1:9001' }).upstreams['prov-a'].baseUrl,
      '/v1/messages',
      'beta=true&x=%2F%20a',
    );
    expect(url.href).toBe('http://127.0.0.1:9001/v1/messages?beta=true&x=%2F%20a');
  });
});
