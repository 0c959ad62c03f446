import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { UPSTREAM_TIMEOUT_MS: '8000' } });
});
afterAll(async () => {
  await proxy.stop();
});

it('a stream with pauses longer than the idle-socket timeout but within the upstream limit completes', async () => {
  // The upstream agent drops sockets idle for 2 s; a socket in use must never be cut by that.
  proxy.fakes.fakes['prov-b'].next({ chunks: 1, chunkIntervalMs: 2_500 });
  const result = await callThroughSdk({
    proxyBase: proxy.proxyBase,
    provider: 'prov-b',
    token: proxy.account.token,
    stream: true,
  });
  expect(result.text.length).toBeGreaterThan(0);
  const [row] = await proxy.rowsFor(proxy.account.token, [result.requestId]);
  expect(row).toMatchObject({ status_code: 200, stream: true });
  expect(row.error).toBeUndefined();
  expect(row.latency_ms as number).toBeGreaterThanOrEqual(5_000);
});

it('the status and headers reach the client when the provider sends them, before its first event', async () => {
  // Providers answer a stream's headers first and the first token later; a client (and its timeout) sees the answer begin.
  proxy.fakes.fakes['prov-b'].next({ chunks: 2, firstEventDelayMs: 1_500 });
  const sent = Date.now();
  const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
  });
  const headersAfter = Date.now() - sent;
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const reader = response.body!.getReader();
  await reader.read();
  const firstEventAfter = Date.now() - sent;
  while (!(await reader.read()).done);
  expect(headersAfter).toBeLessThan(1_000);
  expect(firstEventAfter).toBeGreaterThanOrEqual(1_400);
});
