/**
 * Hostile requests at the HTTP level: headers (random values, over-long,
 * CR/LF, duplicates); content types and sizes are in bad-input-body.test.ts. Never a 500
 * or a crash, always the contracted status (in the endpoint's error shape when
 * the proxy answers), and a rejected request never reaches the provider.
 * Requests `fetch` refuses to send go over a raw socket. Paths and methods
 * are in bad-input-routes.test.ts.
 */
import fc from 'fast-check';
import type { ProviderId } from '../fakes/start-fakes';
import {
  credentialHeaders,
  expectChatError,
  expectEndpointError,
  expectMessagesError,
  PROVIDERS,
  rawPost,
  rawRequest,
} from '../reliability/support/requests';
import { rowOf } from '../reliability/support/rows';
import { validBody } from './support/validity';
import { credentialLines, notForwarded, path, post, proxy, token, useHttpInputProxy } from './support/http-input';

jest.setTimeout(360_000);

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

useHttpInputProxy();

const printable = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 80,
});
const withInnerSpaces = fc
  .tuple(printable, fc.constantFrom('', ' ', '  '), printable)
  .map(([a, gap, b]) => `${a}${gap}${b}`);

describe('property: random values in the headers the proxy reads', () => {
  test('x-proxy-cache: anything but true/refresh/false is a 400 naming the header, never forwarded', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROVIDERS), withInnerSpaces, async (id, value) => {
        fc.pre(!['true', 'refresh', 'false'].includes(value.trim().toLowerCase()));
        const result = await notForwarded(() =>
          post(id, { 'content-type': 'application/json', ...credentialHeaders(id, token), 'x-proxy-cache': value }),
        );
        expect(result.status).toBe(400);
        expect(expectEndpointError(id, result.text)).toContain('x-proxy-cache');
      }),
      { numRuns: RUNS },
    );
  });

  test('the credential header: any value that is not a live token or a key with x-proxy-token is a 401', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PROVIDERS),
        fc.oneof(
          withInnerSpaces,
          withInnerSpaces.map((v) => `sk-proxy-${v}`),
        ),
        fc.boolean(),
        async (id, credential, alsoProxyToken) => {
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            ...credentialHeaders(id, credential),
          };
          // A random x-proxy-token never names a live token either.
          if (alsoProxyToken) headers['x-proxy-token'] = `sk-proxy-${credential}`;
          const result = await notForwarded(() => post(id, headers));
          expect(result.status).toBe(401);
          expectEndpointError(id, result.text);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('x-proxy-user: any printable label is accepted and logged as sent', async () => {
    const labels: Array<{ id: string; label: string }> = [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROVIDERS), withInnerSpaces, async (id, label) => {
        const result = await post(id, {
          'content-type': 'application/json',
          ...credentialHeaders(id, token),
          'x-proxy-user': label,
        });
        expect(result.status).toBe(200);
        labels.push({ id: result.headers.get('x-proxy-request-id')!, label });
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    for (const { id, label } of labels.slice(-10)) expect((await rowOf(proxy, token, id)).requester).toBe(label);
  });
});

describe('header edge cases over a raw socket', () => {
  const body = (id: ProviderId) => JSON.stringify(validBody(id));

  test.each([
    ['a bare CR inside a value', 'x-proxy-user: alice\rx-injected: 1'],
    ['a bare LF inside a value', 'x-proxy-user: alice\nx-injected: 1'],
    ['a NUL byte inside a value', 'x-proxy-user: ali\u0000ce'],
    ['an obsolete folded continuation line', 'x-proxy-user: alice\r\n  folded'],
    ['a space before the colon', 'x-proxy-user : alice'],
    ['a header name with a slash', 'x/proxy-user: alice'],
  ])('%s: refused with 400 before the proxy runs, nothing forwarded, server still up', async (_name, line) => {
    const answer = await notForwarded(() =>
      rawRequest(
        proxy.url,
        rawPost(
          proxy.url,
          path('prov-b'),
          ['content-type: application/json', ...credentialLines('prov-b'), line],
          body('prov-b'),
        ),
      ),
    );
    expect(answer.status).toBe(400);
    expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  });

  test('header bytes above 0x7F that are no UTF-8 are a 400 in the endpoint’s shape, never a 500, nothing forwarded', async () => {
    const head = Buffer.from(`x-proxy-user: caf\u00e9-\u00ff\r\n`, 'latin1');
    const request = Buffer.concat([
      rawPost(
        proxy.url,
        path('prov-d'),
        ['content-type: application/json', ...credentialLines('prov-d'), head.toString('latin1').trimEnd()],
        body('prov-d'),
      ),
    ]);
    const answer = await notForwarded(() => rawRequest(proxy.url, request));
    expect(answer.status).toBe(400);
    expect(expectEndpointError('prov-d', answer.body)).toContain('not valid UTF-8');
  });

  test('over-long headers are refused (431) before the proxy runs, nothing forwarded', async () => {
    const cases = [
      [`x-proxy-user: ${'u'.repeat(20_000)}`],
      [`authorization: Bearer ${'t'.repeat(20_000)}`],
      Array.from({ length: 3000 }, (_, i) => `x-h${i}: v`),
    ];
    for (const lines of cases) {
      const answer = await notForwarded(() =>
        rawRequest(
          proxy.url,
          rawPost(
            proxy.url,
            path('prov-b'),
            ['content-type: application/json', ...credentialLines('prov-b'), ...lines],
            body('prov-b'),
          ),
        ),
      );
      expect(answer.status).toBe(431);
    }
    expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  });

  test('a long but acceptable label (8 KB) is logged whole', async () => {
    const label = 'l'.repeat(8 * 1024);
    const result = await post('prov-e', {
      'content-type': 'application/json',
      ...credentialHeaders('prov-e', token),
      'x-proxy-user': label,
    });
    expect(result.status).toBe(200);
    expect((await rowOf(proxy, token, result.headers.get('x-proxy-request-id')!)).requester).toBe(label);
  });

  describe('duplicate headers', () => {
    const send = (id: ProviderId, lines: string[]) =>
      notForwarded(() =>
        rawRequest(proxy.url, rawPost(proxy.url, path(id), ['content-type: application/json', ...lines], body(id))),
      );

    test('two x-api-key values (a live token and something else) are a 401, in either order', async () => {
      for (const lines of [
        [`x-api-key: ${token}`, 'x-api-key: sk-ant-other'],
        ['x-api-key: sk-ant-other', `x-api-key: ${token}`],
      ]) {
        const answer = await send('prov-a', ['anthropic-version: 2023-06-01', ...lines]);
        expect(answer.status).toBe(401);
        expectMessagesError(answer.body);
      }
    });

    test('two Authorization headers are an ambiguous credential: 401, as a function URL (which joins them) answers', async () => {
      for (const lines of [
        [`authorization: Bearer ${token}`, 'authorization: Bearer sk-other'],
        ['authorization: Bearer sk-other', `authorization: Bearer ${token}`],
      ]) {
        const answer = await send('prov-b', lines);
        expect(answer.status).toBe(401);
        expectChatError(answer.body);
      }
    });

    test('two x-proxy-token values are a 401; two x-proxy-cache values are a 400', async () => {
      const tokens = await send('prov-c', [
        'authorization: Bearer client-own-key-dup-0001',
        `x-proxy-token: ${token}`,
        `x-proxy-token: ${token}`,
      ]);
      expect(tokens.status).toBe(401);
      const cache = await send('prov-c', [
        ...credentialLines('prov-c'),
        'x-proxy-cache: true',
        'x-proxy-cache: refresh',
      ]);
      expect(cache.status).toBe(400);
      expect(expectChatError(cache.body).message).toContain('x-proxy-cache');
    });

    test('two different content-length values are refused by the HTTP layer (400)', async () => {
      const text = body('prov-b');
      const head = [
        `POST ${path('prov-b')} HTTP/1.1`,
        'host: x',
        'content-type: application/json',
        ...credentialLines('prov-b'),
        `content-length: ${text.length}`,
        `content-length: ${text.length + 5}`,
        'connection: close',
        '',
        '',
      ].join('\r\n');
      const answer = await notForwarded(() => rawRequest(proxy.url, head + text));
      expect(answer.status).toBe(400);
    });
  });
});

test('after all of it the server is up, and it never answered 500', async () => {
  expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  expect(proxy.output()).not.toMatch(/"status":500/);
});
