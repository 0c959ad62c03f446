/**
 * CORS: only localhost origins and CORS_ALLOWED_ORIGINS get CORS headers, and
 * preflights from anywhere else are refused. SSRF: the upstream address comes
 * from configuration only; no header, body field or path can send the proxy
 * anywhere else (a canary server counts every attempt).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import {
  callProxy,
  credentialHeaders,
  ENDPOINT,
  PROVIDERS,
  rawPost,
  rawRequest,
  requestBody,
  upstreamCalls,
} from '../reliability/support/requests';

const PRODUCTION = 'https://app.example.com';

let proxy: ProxyServer;
let token: string;
let canary: Server;
let canaryUrl: string;
let canaryHits = 0;

beforeAll(async () => {
  canary = createServer((request, response) => {
    canaryHits++;
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"canary":true}');
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
  proxy = await startProxy({ env: { CORS_ALLOWED_ORIGINS: `${PRODUCTION}, https://admin.example.org/` } });
  token = proxy.account.token;
});
afterAll(async () => {
  await proxy?.stop();
  await new Promise((resolve) => canary?.close(resolve));
});

describe('CORS', () => {
  const allowed = [
    'http://localhost:5173',
    'http://localhost',
    'https://localhost:8443',
    'http://127.0.0.1:3000',
    'http://[::1]:8080',
    PRODUCTION,
    'https://admin.example.org',
  ];
  const refused = [
    'https://evil.example',
    'http://localhost.evil.example',
    'http://evil.example?localhost',
    'https://app.example.com.evil.example',
    'https://evil-app.example.com',
    'http://app.example.com',
    'http://localhost:5173/path',
    'http://127.0.0.1.nip.io',
    'http://localhost:80@evil.example',
    'null',
    'file://',
  ];

  async function corsOf(origin: string) {
    const proxied = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
      body: JSON.stringify(requestBody('prov-b')),
    });
    await proxied.text();
    const management = await fetch(`${proxy.url}/api/logs?limit=1`, {
      headers: { origin, authorization: `Bearer ${token}` },
    });
    await management.text();
    const before = upstreamCalls(proxy);
    const preflight = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, x-proxy-cache',
      },
    });
    await preflight.text();
    expect(upstreamCalls(proxy)).toBe(before);
    return { proxied, management, preflight };
  }

  test.each(allowed)('%s is allowed: CORS headers on answers, preflight 204', async (origin) => {
    const { proxied, management, preflight } = await corsOf(origin);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get('access-control-allow-origin')).toBe(origin.replace(/\/$/, ''));
    expect(proxied.headers.get('access-control-expose-headers')).toContain('x-proxy-request-id');
    expect(management.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-proxy-cache');
  });

  test.each(refused)('%s is refused: no CORS header anywhere, preflight 403', async (origin) => {
    const { proxied, management, preflight } = await corsOf(origin);
    for (const response of [proxied, management, preflight]) {
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
    expect(preflight.status).toBe(403);
  });

  test('no allow-origin wildcard, ever (the API takes bearer credentials)', async () => {
    const preflight = await fetch(`${proxy.url}/api/keys`, {
      method: 'OPTIONS',
      headers: { origin: '*', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('SSRF: only configuration decides where a request goes', () => {
  function expectOnlyTheFake(before: number, calledFake: boolean): void {
    expect(canaryHits).toBe(0);
    expect(upstreamCalls(proxy)).toBe(before + (calledFake ? 1 : 0));
  }

  test.each([
    'x-forwarded-host',
    'x-forwarded-proto',
    'forwarded',
    'x-original-url',
    'x-rewrite-url',
    'x-host',
    'x-proxy-upstream',
    'upstream_base_url_prov_b',
    'x-upstream-base-url',
    'origin',
    'referer',
  ])('header %s naming another server has no effect', async (header) => {
    const canaryHost = new URL(canaryUrl).host;
    const value =
      header === 'forwarded'
        ? `host=${canaryHost};proto=http`
        : header.includes('host')
          ? canaryHost
          : header === 'x-forwarded-proto'
            ? 'http'
            : canaryUrl;
    const before = upstreamCalls(proxy);
    const result = await callProxy(proxy, { provider: 'prov-b', token, headers: { [header]: value } });
    expect(result.status).toBe(200);
    expectOnlyTheFake(before, true);
    const sent = proxy.fakes.fakes['prov-b'].requests.at(-1)!;
    expect(sent.headers.host).toBe(new URL(proxy.fakes.fakes['prov-b'].origin).host);
  });

  test('a Host header naming another server has no effect (raw request)', async () => {
    const before = upstreamCalls(proxy);
    const request = rawPost(
      proxy.url,
      `/api/proxy${ENDPOINT['prov-a']}`,
      ['content-type: application/json', `x-api-key: ${token}`, 'anthropic-version: 2023-06-01'],
      JSON.stringify(requestBody('prov-a')),
    )
      .toString('latin1')
      .replace(/\r\nhost: [^\r]*/, `\r\nhost: ${new URL(canaryUrl).host}`);
    const answer = await rawRequest(proxy.url, request);
    expect(answer.status).toBe(200);
    expectOnlyTheFake(before, true);
  });

  test('an absolute-form request target naming another server is served from configuration', async () => {
    const before = upstreamCalls(proxy);
    const request = rawPost(
      proxy.url,
      `${canaryUrl}/api/proxy${ENDPOINT['prov-d']}`,
      ['content-type: application/json', `authorization: Bearer ${token}`],
      JSON.stringify(requestBody('prov-d')),
    );
    const answer = await rawRequest(proxy.url, request);
    expect([200, 400, 404]).toContain(answer.status);
    expectOnlyTheFake(before, answer.status === 200);
  });

  test.each(PROVIDERS)(
    '%s: body fields naming another server (base_url, api_base, baseURL, url, endpoint, host) have no effect',
    async (provider) => {
      const before = upstreamCalls(proxy);
      const body = {
        ...requestBody(provider),
        base_url: canaryUrl,
        api_base: canaryUrl,
        baseURL: canaryUrl,
        url: `${canaryUrl}/v1/chat/completions`,
        endpoint: canaryUrl,
        host: new URL(canaryUrl).host,
        upstream: canaryUrl,
        extra_headers: { host: new URL(canaryUrl).host },
      };
      const result = await callProxy(proxy, { provider, token, body });
      expect(result.status).toBe(200);
      expectOnlyTheFake(before, true);
    },
  );

  test('a model naming a URL, and paths with a URL or traversal in them, never leave the configured upstream', async () => {
    const before = upstreamCalls(proxy);
    const result = await callProxy(proxy, {
      provider: 'prov-c',
      token,
      body: { ...requestBody('prov-c'), model: `${canaryUrl}/../../x` },
    });
    expect(result.status).toBe(200);
    expectOnlyTheFake(before, true);
    for (const path of [
      `/api/proxy/${canaryUrl}/v1/messages`,
      `/api/proxy//${new URL(canaryUrl).host}/v1/messages`,
      '/api/proxy/prov-b/v1/chat/completions/..%2f..%2f',
    ]) {
      const count = upstreamCalls(proxy);
      const answer = await rawRequest(
        proxy.url,
        rawPost(
          proxy.url,
          path,
          ['content-type: application/json', `x-api-key: ${token}`],
          JSON.stringify(requestBody('prov-a')),
        ),
      );
      expect(answer.status).toBe(404);
      expectOnlyTheFake(count, false);
    }
  });
});
