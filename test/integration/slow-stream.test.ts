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
  // The fake holds its first event until the client has the headers: were they held back until a body
  // byte came, the request would never be answered.
  let headersReceived: () => void = () => undefined;
  const firstEventWhen = new Promise<void>((resolve) => (headersReceived = resolve));
  proxy.fakes.fakes['prov-b'].next({ chunks: 2, firstEventWhen });
  const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  headersReceived();
  const text = await response.text();
  expect(text).toContain('data: ');
});
