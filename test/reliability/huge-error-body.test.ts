/**
 * A provider answers an error with a ~600 MB body that quotes the stored key
 * again and again. The body is streamed to the client through the redactor,
 * never held whole: the process stays up with bounded memory, other streams in
 * flight finish, the client gets every byte but the key, and the row keeps a
 * short, redacted message.
 */
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy, credentialHeaders, ENDPOINT, requestBody, streamEndedCleanly } from './support/requests';
import { rowOf } from './support/rows';
import { rssOf, startScriptedUpstream, type ScriptedUpstream } from './support/scripted-upstream';

jest.setTimeout(400_000);

const MB = 1024 * 1024;
const TOTAL_MB = 600;
/** Far below the ~1.2 GB a whole-body copy of 600 MB needs, far above what streaming uses. */
const RSS_BOUND = 300 * MB;
const REDACTED = '[redacted]';

let upstream: ScriptedUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startProxy({ env: { UPSTREAM_BASE_URL_PROV_C: `${upstream.url}/v1beta/openai` } });
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

test(`a ${TOTAL_MB} MB error body quoting the stored key: process up, memory bounded, other streams finish, key never sent`, async () => {
  const key = proxy.storedKeys['prov-c'];
  const keyBytes = Buffer.from(key);
  let quoted = 0;
  upstream.next({
    status: 401,
    contentType: 'application/json',
    async body(write, request) {
      // The key the proxy sent, quoted the way some compatible servers do.
      const sentKey = String(request.headers.authorization).replace('Bearer ', '');
      await write(`{"error":{"message":"Incorrect API key provided: ${sentKey}. `);
      quoted++;
      const filler = Buffer.alloc(MB, 'x');
      for (let i = 0; i < TOTAL_MB; i++) {
        if (i % 50 === 25) {
          // Split across two writes, so the key straddles a chunk boundary.
          await write(`see ${sentKey.slice(0, 7)}`);
          await write(`${sentKey.slice(7)} `);
          quoted++;
        }
        await write(filler);
      }
      await write('","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}');
    },
  });

  // Five ordinary streams run alongside it.
  for (let i = 0; i < 5; i++) proxy.fakes.fakes['prov-a'].next({ chunkIntervalMs: 100, chunks: 30 });
  const others = Array.from({ length: 5 }, (_, i) =>
    callProxy(proxy, { provider: 'prov-a', token: proxy.account.token, stream: true, prompt: `alongside ${i}` }),
  );

  let peakRss = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, await rssOf(proxy.pid).catch(() => 0));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();

  const response = await fetch(proxy.proxyBase + ENDPOINT['prov-c'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-c', proxy.account.token) },
    body: JSON.stringify(requestBody('prov-c', 'huge error')),
  });
  expect(response.status).toBe(401);
  const requestId = response.headers.get('x-proxy-request-id')!;
  // Read every byte, looking for the key across chunk boundaries.
  let received = 0;
  let leaks = 0;
  let redactions = 0;
  let carry = Buffer.alloc(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    received += chunk.length;
    const window = Buffer.concat([carry, Buffer.from(chunk)]);
    for (let at = window.indexOf(keyBytes); at >= 0; at = window.indexOf(keyBytes, at + 1)) leaks++;
    for (let at = window.indexOf(REDACTED); at >= 0; at = window.indexOf(REDACTED, at + 1))
      if (at + REDACTED.length > carry.length) redactions++;
    carry = Buffer.from(window.subarray(Math.max(0, window.length - Math.max(keyBytes.length, REDACTED.length) + 1)));
  }
  sampling = false;
  await sampler;

  expect(leaks).toBe(0);
  expect(redactions).toBe(quoted);
  expect(received).toBe(upstream.sentBytes[0]! - quoted * (key.length - REDACTED.length));
  expect(peakRss).toBeGreaterThan(0);
  expect(peakRss).toBeLessThan(RSS_BOUND);

  for (const other of await Promise.all(others)) {
    expect(other.status).toBe(200);
    expect(streamEndedCleanly('prov-a', other.text)).toBe(true);
  }
  const health = await fetch(`${proxy.url}/api/health`);
  expect(health.status).toBe(200);

  const row = await rowOf(proxy, proxy.account.token, requestId);
  expect(row.status_code).toBe(401);
  expect(row.error).toContain('Incorrect API key provided');
  expect(row.error).toContain(REDACTED);
  expect(row.error).not.toContain(key);
  expect(String(row.error).length).toBeLessThanOrEqual(2_000);
});
