/**
 * Bedrock's paths (docs/bedrock.md, "Endpoints"): the model segment of the four endpoints may carry a
 * URL-encoded ARN (its `/` as `%2F`, decoded once for the row and the cache key, forwarded still encoded),
 * and nothing else encoded that could move the upstream path; every other Bedrock Runtime path is
 * forwarded as `other` under the rules of every provider's other paths.
 */
import fc from 'fast-check';
import { loadConfig } from '../../../lambda/wiring/config';
import { providerById, resolveProxyPath, upstreamUrl } from '../../../lambda/providers/registry';

const ARN = 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6';

function found(path: string, method = 'POST') {
  const result = resolveProxyPath(path, method);
  if (!result || !('found' in result)) throw new Error(`${method} ${path} did not resolve: ${JSON.stringify(result)}`);
  const { provider, endpoint, upstreamPath, model } = result.found;
  return { provider: provider.id, kind: endpoint.kind, dialect: endpoint.dialect.name, upstreamPath, model };
}

describe('Bedrock endpoints and their model segment', () => {
  it.each([
    ['/bedrock/model/eu.anthropic.claude-sonnet-4-6/converse', 'converse', 'eu.anthropic.claude-sonnet-4-6'],
    [
      '/bedrock/model/global.anthropic.claude-sonnet-4-6/converse-stream',
      'converse',
      'global.anthropic.claude-sonnet-4-6',
    ],
    ['/bedrock/model/anthropic.claude-sonnet-4-6-v1%3A0/invoke', 'invoke', 'anthropic.claude-sonnet-4-6-v1:0'],
    [
      '/bedrock/model/anthropic.claude-sonnet-4-6-v1:0/invoke-with-response-stream',
      'invoke',
      'anthropic.claude-sonnet-4-6-v1:0',
    ],
    [`/bedrock/model/${encodeURIComponent(ARN)}/converse`, 'converse', ARN],
    [`/bedrock/model/${encodeURIComponent(ARN).replace(/%3A/g, '%3a').replace('%2F', '%2f')}/invoke`, 'invoke', ARN],
  ])('%s → %s of %s, forwarded as sent', (path, kind, model) => {
    expect(found(path)).toEqual({
      provider: 'bedrock',
      kind,
      dialect: kind,
      upstreamPath: path.slice('/bedrock'.length),
      model,
    });
  });

  const hostile = [
    '/bedrock/model/x%2F..%2Fy/converse',
    '/bedrock/model/..%2Fy/converse',
    '/bedrock/model/x%2F..%2F..%2Fconverse/converse',
    '/bedrock/model/%2e%2e/converse',
    '/bedrock/model/%2E%2E%2Fadmin/converse',
    '/bedrock/model/x%2F.%2Fy/converse',
    '/bedrock/model/x%252Fy/converse',
    '/bedrock/model/x%252F..%252Fy/converse',
    '/bedrock/model/x%00y/converse',
    '/bedrock/model/x%00/converse-stream',
    '/bedrock/model/x%0Ay/invoke',
    '/bedrock/model/x%2F/converse',
    '/bedrock/model/%2Fx/converse',
    '/bedrock/model/x%2F%2Fy/converse',
    '/bedrock/model/x%5C..%5Cy/converse',
    '/bedrock/model/x%3Fy/converse',
    '/bedrock/model/x%23y/converse',
    '/bedrock/model/x%40evil.example/converse',
    // Harmless in another path, but no model id: in an endpoint's path these are refused rather than
    // forwarded as `other`, which would skip the body's checks, the token's model list and the usage.
    '/bedrock/model/x%20y/converse',
    '/bedrock/model/x%2Cy/converse-stream',
    '/bedrock/model/x,y/invoke',
    "/bedrock/model/x'y/invoke-with-response-stream",
    '/bedrock/model/eu.anthropic.claude-sonnet-4-6%7E/converse',
    '/bedrock/model/../converse',
    '/bedrock/model/x/../../converse',
    '/bedrock/model//converse',
    '/bedrock/model/x%2F..%2Fy/count-tokens',
    '/bedrock/async-invoke/%2e%2e',
    '/bedrock/async-invoke/x%00',
  ];
  it.each(hostile)('%s is refused, on every method', (path) => {
    for (const method of ['POST', 'GET', 'PUT']) {
      const result = resolveProxyPath(path, method);
      expect(result === undefined || 'unsafe' in result || 'notOffered' in result).toBe(true);
    }
  });

  it('any model segment accepted yields a URL on the Bedrock host, with the path shape /model/{one segment}/converse', () => {
    const base = loadConfig({}).upstreams.bedrock.baseUrl;
    const piece = fc.constantFrom(
      'a',
      'x.y',
      ':',
      '/',
      '%2F',
      '%2f',
      '%2e',
      '.',
      '..',
      '%252F',
      '%00',
      '%3A',
      '%',
      '\\',
      '%5C',
      '?',
      '#',
      '@',
      '-',
      '~',
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const result = resolveProxyPath(`/bedrock/model/${pieces.join('')}/converse`, 'POST');
        if (!result || !('found' in result) || result.found.endpoint.kind !== 'converse') return;
        const url = upstreamUrl(providerById('bedrock')!, base, result.found.upstreamPath);
        expect(url.origin).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
        expect(url.pathname).toMatch(/^\/model\/[^/]+\/converse$/);
        expect(decodeURIComponent(url.pathname.split('/')[2]!)).toBe(result.found.model);
        expect(result.found.model!.split('/')).not.toEqual(expect.arrayContaining(['', '.', '..']));
      }),
    );
  });
});

describe('Bedrock operations the proxy does not forward', () => {
  it.each([
    ['POST', '/bedrock/model/eu.anthropic.claude-sonnet-4-6/count-tokens', 'eu.anthropic.claude-sonnet-4-6'],
    ['POST', `/bedrock/model/${encodeURIComponent(ARN)}/count-tokens`, ARN],
  ])('%s %s → count_tokens, free, the model read from the path', (method, path, model) => {
    expect(found(path, method)).toEqual({
      provider: 'bedrock',
      kind: 'count_tokens',
      dialect: 'passthrough',
      upstreamPath: path.slice('/bedrock'.length),
      model,
    });
  });

  it.each([
    ['POST', '/bedrock/async-invoke'],
    ['GET', '/bedrock/async-invoke'],
    ['GET', `/bedrock/async-invoke/${encodeURIComponent('arn:aws:bedrock:eu-west-1:123456789012:async-invoke/abc')}`],
    ['POST', '/bedrock/guardrail/gr-123/version/1/apply'],
    ['DELETE', '/bedrock/model/x/converse-x'],
    ['GET', '/bedrock/model/eu.anthropic.claude-sonnet-4-6'],
    ['POST', '/bedrock/model/eu.anthropic.claude-sonnet-4-6/invoke-with-bidirectional-stream'],
    ['GET', '/bedrock/'],
    ['PUT', '/bedrock/anything/at/all'],
  ])('%s %s is not offered (404), never forwarded as other', (method, path) => {
    expect(resolveProxyPath(path, method)).toEqual({ notOffered: expect.objectContaining({}) });
  });

  it('an endpoint path with another method is 405 with POST', () => {
    for (const operation of ['converse', 'converse-stream', 'invoke', 'invoke-with-response-stream', 'count-tokens'])
      expect(resolveProxyPath(`/bedrock/model/eu.anthropic.claude-sonnet-4-6/${operation}`, 'GET')).toEqual({
        wrongMethod: expect.objectContaining({ allowed: 'POST' }),
      });
  });

  it('an encoded slash elsewhere is refused as for every provider', () => {
    expect(resolveProxyPath('/prov-b/v1/files/a%2Fb', 'GET')).toEqual({ unsafe: expect.anything() });
  });
});
