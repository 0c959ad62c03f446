/**
 * Hostile request lines: odd paths (traversal, encoded slashes, URLs inside,
 * broken percent-encoding) and methods other than POST. Never a 500, always
 * the contracted status in an error shape, never forwarded. Raw sockets send
 * the paths exactly as written (fetch would normalise them).
 */
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
import { validBody } from './support/validity';

let proxy: ProxyServer;
let token: string;

beforeAll(async () => {
  proxy = await startProxy();
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

/** Runs a request and checks that the provider was not called. */
async function notForwarded<T>(run: () => Promise<T>): Promise<T> {
  const before = upstreamCalls(proxy);
  const result = await run();
  expect(upstreamCalls(proxy)).toBe(before);
  return result;
}

// Other plain paths under a provider (`/prov-b/v2/…`) are forwarded as the provider's `other` kind: see test/integration/endpoints-passthrough.test.ts.
describe('paths', () => {
  const oddPaths = [
    '/api/proxy',
    '/api/proxy/',
    '/api/proxy/prov-x/v1/chat/completions',
    '/api/proxy/prov-b%2Fv1%2Fchat%2Fcompletions',
    '/api/proxy/prov-b/v1/chat/completions%00',
    '/api/proxy/prov-b/v1/chat/completions/../../../../etc/passwd',
    '/api/proxy/%2e%2e/%2e%2e/etc/passwd',
    '/api/proxy/v1/messages/..%2f..%2f..%2fetc%2fpasswd',
    '/api/proxy/http://127.0.0.1:9/v1/messages',
    '/assets/../../../../etc/passwd',
    '/assets/..%2f..%2f..%2fpackage.json',
    '/.env',
    '/api/../../../etc/passwd',
    `/api/proxy/${'a/'.repeat(3000)}v1/messages`,
    // Checked as received: each of these would lead somewhere else once normalised.
    '/api/proxy/prov-b/x/../../prov-a/v1/files',
    '/api/proxy/prov-b/x/%2e%2e/y',
    '/api/proxy/prov-b/x/%2E%2E/%2e%2e/prov-a/v1/files',
    '/api/proxy/prov-b/v1/chat/completions/..',
    '/api/proxy/prov-b/v1/./models',
    '/api/proxy/prov-b/v1/x/.%2e/models',
    '/api/proxy/prov-b/v1/models/.',
  ];

  test.each(oddPaths)('POST %s → 404 in an error shape, never forwarded', async (odd) => {
    const answer = await notForwarded(() =>
      rawRequest(
        proxy.url,
        rawPost(
          proxy.url,
          odd,
          ['content-type: application/json', ...credentialLines('prov-b')],
          JSON.stringify(validBody('prov-b')),
        ),
      ),
    );
    expect(answer.status).toBe(404);
    // Below provider A's `/v1` the answer is in its shape; elsewhere below the proxy's base the
    // chat-completions one; any other `/api/` path is the management API's, in its own shape.
    const shaped = isManagementPath(odd)
      ? expectManagementError(answer.body).message
      : odd.endsWith('/messages') || odd.startsWith('/api/proxy/v1/')
        ? expectMessagesError(answer.body).message
        : expectChatError(answer.body).message;
    expect(shaped).toBeTruthy();
  });

  test('an absolute-form request target is checked as received too', async () => {
    const target = `${proxy.url}/api/proxy/prov-b/x/../../prov-a/v1/files`;
    const answer = await notForwarded(() =>
      rawRequest(
        proxy.url,
        rawPost(
          proxy.url,
          target,
          ['content-type: application/json', ...credentialLines('prov-b')],
          JSON.stringify(validBody('prov-b')),
        ),
      ),
    );
    expect(answer.status).toBe(404);
    expectChatError(answer.body);
  });

  test.each([
    ['DELETE', '/api/keys/%E0%A4%A'],
    ['DELETE', '/api/keys/%'],
    ['GET', '/api/keys/%zz'],
    ['DELETE', '/api/tokens/%E0%A4%A'],
    ['DELETE', '/api/admin/tokens/%'],
  ])('%s %s (broken percent-encoding) → a 4xx in the API error shape, never a 500', async (method, odd) => {
    const answer = await rawRequest(
      proxy.url,
      [`${method} ${odd} HTTP/1.1`, 'host: x', `authorization: Bearer ${token}`, 'connection: close', '', ''].join(
        '\r\n',
      ),
    );
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expectManagementError(answer.body);
  });
});

function isManagementPath(path: string): boolean {
  return path.startsWith('/api/') && !path.startsWith('/api/proxy/');
}

describe('methods', () => {
  test.each(['GET', 'PUT', 'DELETE', 'PATCH', 'TRACE'])(
    '%s on every proxy path → 405 with Allow: POST, never forwarded',
    async (method) => {
      for (const id of PROVIDERS) {
        const answer = await notForwarded(() =>
          rawRequest(
            proxy.url,
            [
              `${method} ${path(id)} HTTP/1.1`,
              'host: x',
              ...credentialLines(id),
              'content-length: 0',
              'connection: close',
              '',
              '',
            ].join('\r\n'),
          ),
        );
        expect(answer.status).toBe(405);
        expect(answer.headers.allow).toBe('POST');
        expectEndpointError(id, answer.body);
      }
    },
  );

  test('HEAD on a proxy path → 405 without a body', async () => {
    const response = await notForwarded(() =>
      fetch(proxy.proxyBase + ENDPOINT['prov-a'], { method: 'HEAD', headers: credentialHeaders('prov-a', token) }),
    );
    expect(response.status).toBe(405);
    expect(await response.text()).toBe('');
  });

  test('OPTIONS preflight: answered for a localhost origin, refused (403, no CORS headers) for others, never forwarded', async () => {
    const preflight = (origin: string) =>
      notForwarded(() =>
        fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type',
          },
        }),
      );
    const local = await preflight('http://localhost:5173');
    expect(local.status).toBe(204);
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

test('after all of it the server is up, and it never answered 500', async () => {
  expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  expect(proxy.output()).not.toMatch(/"status":500/);
});
