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
  const result = await callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-b', token: proxy.account.token, stream: true });
  expect(result.text.length).toBeGreaterThan(0);
  const [row] = await proxy.rowsFor(proxy.account.token, [result.requestId]);
  expect(row).toMatchObject({ status_code: 200, stream: true });
  expect(row.error).toBeUndefined();
  expect(row.latency_ms as number).toBeGreaterThanOrEqual(5_000);
});
