/**
 * Hostile requests at the HTTP level: headers (random values, over-long,
 * CR/LF, duplicates), content types and sizes. Never a 500
 * or a crash, always the contracted status (in the endpoint's error shape when
 * the proxy answers), and a rejected request never reaches the provider.
 * Requests `fetch` refuses to send go over a raw socket. Paths and methods
 * are in bad-input-routes.test.ts.
 */
import fc from 'fast-check';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import {
  credentialHeaders,
  ENDPOINT,
  expectChatError,
  expectEndpointError,
  expectMessagesError,
  PROVIDERS,
  rawPost,
  rawRequest,
  upstreamCalls,
  expectManagementError,
} from '../reliability/support/requests';
import { rowOf } from '../reliability/support/rows';
import { validBody } from './support/validity';

jest.setTimeout(360_000);

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const MB = 1024 * 1024;

let proxy: ProxyServer;
let token: string;

beforeAll(async () => {
  proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
  token = proxy.account.token;
});
afterAll(async () => {
  await proxy?.stop();
});

const path = (id: ProviderId) => `/api/proxy${ENDPOINT[id]}`;
const credentialLines = (id: ProviderId, credential = token) =>
  id === 'prov-a'
    ? [`x-api-key: ${credential}`, 'anthropic-version: 2023-06-01']
    : [`authorization: Bearer ${credential}`];

async function post(
  id: ProviderId,
  headers: Record<string, string>,
  body: string | Buffer = JSON.stringify(validBody(id)),
) {
  const response = await fetch(proxy.proxyBase + ENDPOINT[id], {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Runs a request and checks that the provider was not called. */
async function notForwarded<T>(run: () => Promise<T>): Promise<T> {
  const before = upstreamCalls(proxy);
  const result = await run();
  expect(upstreamCalls(proxy)).toBe(before);
  return result;
}

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

describe('content type', () => {
  test.each([['text/plain'], ['multipart/form-data; boundary=x'], ['application/xml'], ['application/octet-stream']])(
    '%s: refused (400 or 415) in the endpoint shape, never forwarded',
    async (contentType) => {
      for (const id of ['prov-a', 'prov-b'] as const) {
        const result = await notForwarded(() =>
          post(id, { 'content-type': contentType, ...credentialHeaders(id, token) }),
        );
        expect([400, 415]).toContain(result.status);
        expect(expectEndpointError(id, result.text)).toMatch(/content-type/i);
      }
    },
  );

  test("curl's default form type: a JSON object body is read as JSON (and sent upstream as application/json); a real form body is refused", async () => {
    for (const id of ['prov-a', 'prov-b'] as const) {
      const form = await notForwarded(() =>
        post(
          id,
          { 'content-type': 'application/x-www-form-urlencoded', ...credentialHeaders(id, token) },
          'model=x&max_tokens=5',
        ),
      );
      expect(form.status).toBe(415);
      expect(expectEndpointError(id, form.text)).toMatch(/content-type/i);
      const before = proxy.fakes.fakes[id].requests.length;
      expect(
        (await post(id, { 'content-type': 'application/x-www-form-urlencoded', ...credentialHeaders(id, token) }))
          .status,
      ).toBe(200);
      expect(proxy.fakes.fakes[id].requests.slice(before).map((r) => r.headers['content-type'])).toEqual([
        'application/json',
      ]);
    }
  });

  test('application/json with a charset or in capitals is accepted', async () => {
    for (const contentType of ['application/json; charset=utf-8', 'Application/JSON']) {
      expect(
        (await post('prov-d', { 'content-type': contentType, ...credentialHeaders('prov-d', token) })).status,
      ).toBe(200);
    }
  });
});

describe('body size', () => {
  const oversized = (id: ProviderId) =>
    JSON.stringify({ ...validBody(id), messages: [{ role: 'user', content: 'x'.repeat(6 * MB) }] });

  // Raw sockets with `connection: close`: a client's pooled connection is tested separately below.
  test.each(['prov-a', 'prov-b'] as const)(
    '%s: a body over 6 MB is a 413 in the endpoint shape, never forwarded',
    async (id) => {
      const answer = await notForwarded(() =>
        rawRequest(
          proxy.url,
          rawPost(proxy.url, path(id), ['content-type: application/json', ...credentialLines(id)], oversized(id)),
        ),
      );
      expect(answer.status).toBe(413);
      expectEndpointError(id, answer.body);
    },
  );

  test('a chunked body over 6 MB (no content-length) is a 413 too', async () => {
    const text = Buffer.from(oversized('prov-e'));
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < text.length; offset += MB) {
      const part = text.subarray(offset, offset + MB);
      chunks.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
    }
    const head = [
      `POST ${path('prov-e')} HTTP/1.1`,
      'host: x',
      'content-type: application/json',
      ...credentialLines('prov-e'),
      'transfer-encoding: chunked',
      'connection: close',
      '',
      '',
    ].join('\r\n');
    const answer = await notForwarded(() =>
      rawRequest(proxy.url, Buffer.concat([Buffer.from(head), ...chunks, Buffer.from('0\r\n\r\n')])),
    );
    expect(answer.status).toBe(413);
    expectChatError(answer.body);
  });

  test('the management API refuses a body over 6 MB with 413 as well', async () => {
    const answer = await rawRequest(
      proxy.url,
      rawPost(
        proxy.url,
        '/api/keys/prov-b',
        [`authorization: Bearer ${token}`, 'content-type: application/json'],
        JSON.stringify({ key: 'k'.repeat(7 * MB) }),
      )
        .toString('latin1')
        .replace(/^POST/, 'PUT'),
    );
    expect(answer.status).toBe(413);
    expect(expectManagementError(answer.body).code).toBe('body_too_large');
  });

  test('oversized uploads through fetch (how the SDKs send) get their 413 every time, on kept-alive connections too', async () => {
    const body = oversized('prov-b');
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      // A bound on waiting, far above the ~100 ms a 413 takes: hanging is the failure.
      const timer = setTimeout(() => controller.abort(), 15_000);
      const outcome = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
        body,
        signal: controller.signal,
      }).then(
        async (response) => `${response.status} ${(await response.text()).length > 0}`,
        (error: Error) => `no answer: ${error.message}`,
      );
      clearTimeout(timer);
      outcomes.push(outcome);
    }
    expect(outcomes).toEqual(Array(5).fill('413 true'));
  });
});

test('after all of it the server is up, and it never answered 500', async () => {
  expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  expect(proxy.output()).not.toMatch(/"status":500/);
});
