/**
 * Every error of the management API has one shape (docs/management-api.md, "Errors"):
 * `{"error":{"code","message","field"}}`, `field` naming what is at fault or null. The API has its
 * own router, ahead of the proxy pipeline: its errors never take a provider's shape.
 */
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

async function errorOf(response: Response): Promise<unknown> {
  expect(response.headers.get('content-type')).toContain('application/json');
  expect(response.headers.get('x-proxy-request-id')).toBeTruthy();
  return response.json();
}

const shaped = (code: string, field: string | null = null) => ({
  error: { code, message: expect.any(String), field },
});

describe('management API errors', () => {
  it('a missing credential, an unknown path, a wrong method: one shape, no field', async () => {
    const noToken = await fetch(`${proxy.url}/api/keys`);
    expect(noToken.status).toBe(401);
    expect(await errorOf(noToken)).toEqual(shaped('unauthenticated'));

    const unknown = await proxy.api('/api/nothing-here', { token: proxy.account.token });
    expect(unknown.status).toBe(404);
    expect(await errorOf(unknown)).toEqual(shaped('not_found'));

    const wrongMethod = await proxy.api('/api/health', { method: 'POST', body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect(await errorOf(wrongMethod)).toEqual(shaped('method_not_allowed'));
  });

  it('a bad query parameter or body field is a 400 naming it in `field`', async () => {
    const badLimit = await proxy.api('/api/logs?limit=0', { token: proxy.account.token });
    expect(badLimit.status).toBe(400);
    expect(await errorOf(badLimit)).toEqual(shaped('invalid_request', 'limit'));

    const badName = await proxy.api('/api/tokens', { method: 'POST', token: proxy.account.token, body: { name: 5 } });
    expect(badName.status).toBe(400);
    expect(await errorOf(badName)).toEqual(shaped('invalid_request', 'name'));

    const notAnObject = await fetch(`${proxy.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
      body: '[1]',
    });
    expect(notAnObject.status).toBe(400);
    expect(await errorOf(notAnObject)).toEqual(shaped('invalid_request'));
  });

  it('a token without the manage scope is a 403; an unknown resource a 404', async () => {
    const created = await proxy.api('/api/tokens', {
      method: 'POST',
      token: proxy.account.token,
      body: { name: 'proxy only' },
    });
    const { token } = (await created.json()) as { token: string };
    const forbidden = await proxy.api('/api/keys', { token });
    expect(forbidden.status).toBe(403);
    expect(await errorOf(forbidden)).toEqual(shaped('forbidden'));

    const missing = await proxy.api('/api/logs/no-such-request', { token: proxy.account.token });
    expect(missing.status).toBe(404);
    expect(await errorOf(missing)).toEqual(shaped('not_found'));
  });

  it('a body over 6 MB is a 413 in the same shape', async () => {
    const big = await proxy.api('/api/tokens', {
      method: 'POST',
      token: proxy.account.token,
      body: { name: 'x'.repeat(6 * 1024 * 1024 + 1) },
    });
    expect(big.status).toBe(413);
    expect(await errorOf(big)).toEqual(shaped('body_too_large'));
  });
});
