/**
 * A provider closes kept-alive connections while they sit idle. When the
 * proxy's request meets such a connection (reset before any answer byte) it is
 * sent once more on a fresh connection: the client gets the answer, one row.
 * A provider that read the request, held it in silence and then hung up may
 * have worked on it: that request is never sent to it again (a second send
 * could be billed twice).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { allRows } from './support/rows';
import { EVENTUALLY_MS } from '../support/patience';

let upstream: Server;
let proxy: ProxyServer;
let answered = 0;
let resetOnReuse = 0;
let resetAlways = false;
/** Reads the request, stays silent this long, then hangs up; counts what it saw. */
let holdThenHangUpMs = 0;
let held = 0;

/**
 * Answers the first request on each connection (keep-alive, as real providers do)
 * and resets the connection when a second request arrives on it: exactly what
 * the client sees when the server's idle timeout closed it just as the request went out.
 */
function startClosingUpstream(): Promise<Server> {
  const server = createServer((request, response) => {
    const socket = request.socket as typeof request.socket & { served?: number };
    socket.served = (socket.served ?? 0) + 1;
    request.resume();
    request.on('end', () => {
      if (holdThenHangUpMs > 0) {
        held++;
        setTimeout(() => socket.destroy(), holdThenHangUpMs);
        return;
      }
      if (socket.served! > 1 || resetAlways) {
        resetOnReuse++;
        socket.resetAndDestroy();
        return;
      }
      answered++;
      const body = JSON.stringify({
        id: `chatcmpl-${answered}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'model-b',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      });
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
        .end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  upstream = await startClosingUpstream();
  const { port } = upstream.address() as AddressInfo;
  proxy = await startProxy({ env: { UPSTREAM_BASE_URL_PROV_B: `http://127.0.0.1:${port}/v1` } });
});
afterAll(async () => {
  await proxy?.stop();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

test('ten requests in a row over connections the provider closes: all answered, one row each', async () => {
  const results = [];
  // One after another, so each finds the connection the previous one left idle in the pool.
  for (let i = 0; i < 10; i++)
    results.push(
      await callProxy(proxy, {
        provider: 'prov-b',
        token: proxy.account.token,
        prompt: `stale ${i}`,
        headers: { 'x-proxy-user': 'stale-socket' },
      }),
    );
  expect(results.map((result) => result.status)).toEqual(Array(10).fill(200));
  // The scenario really happened: requests met a connection the provider had closed.
  expect(resetOnReuse).toBeGreaterThanOrEqual(5);
  expect(answered).toBe(10);
  const deadline = Date.now() + EVENTUALLY_MS;
  let rows = await allRows(proxy, proxy.account.token, 'requester=stale-socket');
  while (rows.length < 10 && Date.now() < deadline)
    rows = await allRows(proxy, proxy.account.token, 'requester=stale-socket');
  expect(rows).toHaveLength(10);
  for (const row of rows) expect(row).toMatchObject({ status_code: 200, input_tokens: 11, output_tokens: 7 });
});

test('a connection reset at once every time: 502 after three attempts at most, never a loop', async () => {
  resetAlways = true;
  const before = resetOnReuse;
  const result = await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, prompt: 'always reset' });
  resetAlways = false;
  expect(result.status).toBe(502);
  expect(resetOnReuse - before).toBeGreaterThanOrEqual(2);
  expect(resetOnReuse - before).toBeLessThanOrEqual(3);
});

test('a provider that reads the request, stays silent and hangs up gets exactly one attempt', async () => {
  // A first request leaves a kept-alive connection in the pool, so the held request goes out on a reused socket.
  expect((await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, prompt: 'warm' })).status).toBe(200);
  // Longer than the margin a reset of an idle socket gets (HELD_REQUEST_MS in lambda/upstream/call-upstream.ts).
  holdThenHangUpMs = 5_000;
  held = 0;
  const result = await callProxy(proxy, {
    provider: 'prov-b',
    token: proxy.account.token,
    prompt: 'held, then hung up',
    headers: { 'x-proxy-user': 'held-request' },
  });
  holdThenHangUpMs = 0;
  expect(result.status).toBe(502);
  expect(held).toBe(1);
  const rows = await proxy.waitForRows(proxy.account.token, 1, 'requester=held-request');
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ status_code: 502, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
});
