/**
 * Hostile bodies at the HTTP level: content types and sizes (over 6 MB, chunked, through the
 * management API, through fetch on kept-alive connections). Never a 500, always the contracted
 * status in the endpoint's error shape, and a refused request never reaches the provider.
 */
import type { ProviderId } from '../fakes/start-fakes';
import {
  credentialHeaders,
  ENDPOINT,
  expectChatError,
  expectEndpointError,
  expectManagementError,
  rawPost,
  rawRequest,
} from '../reliability/support/requests';
import { validBody } from './support/validity';
import { credentialLines, MB, notForwarded, path, post, proxy, token, useHttpInputProxy } from './support/http-input';

jest.setTimeout(360_000);

useHttpInputProxy();

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
