/**
 * A client that goes away: mid-stream, or before the provider has answered.
 * The upstream call is aborted so no more tokens are paid for, and the row
 * records what was seen with the error "client disconnected".
 */
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { credentialHeaders, ENDPOINT, requestBody } from './support/requests';
import { rowOf } from './support/rows';

const FIXED_USAGE = { inputTokens: 1234, outputTokens: 567, cacheReadTokens: 0, cacheWriteTokens: 0 };

let proxy: ProxyServer;
let token: string;

beforeAll(async () => {
  proxy = await startProxy();
  token = proxy.account.token;
});
afterAll(async () => {
  await proxy?.stop();
});
afterEach(() => proxy.fakes.reset());

const fake = (provider: ProviderId) => proxy.fakes.fakes[provider];

describe('the client goes away mid-stream', () => {
  // Anthropic reports input at the start. OpenAI reports usage only at the end, so its row's input is
  // estimated from the request's text: "user" + "leaving early", 17 characters at 4 a token.
  test.each([
    ['prov-a', FIXED_USAGE.inputTokens],
    ['prov-b', 5],
  ] as const)('%s: the upstream call is aborted and the row records what was seen', async (provider, inputSeen) => {
    fake(provider).next({ chunkIntervalMs: 100, chunks: 60, usage: FIXED_USAGE });
    const controller = new AbortController();
    const response = await fetch(proxy.proxyBase + ENDPOINT[provider], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders(provider, token) },
      body: JSON.stringify(requestBody(provider, 'leaving early', true)),
      signal: controller.signal,
    });
    const requestId = response.headers.get('x-proxy-request-id')!;
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    controller.abort();
    await reader.read().catch(() => undefined);

    await fake(provider).waitForAborted(1);
    expect(fake(provider).requests[0]!.response.completed).toBe(false);
    const row = await rowOf(proxy, token, requestId);
    expect(row).toMatchObject({
      status_code: 200,
      stream: true,
      input_tokens: inputSeen,
      error: 'client disconnected',
    });
    expect(row.output_tokens).toBeLessThan(FIXED_USAGE.outputTokens);
  });
});

describe('the client goes away before the provider answers', () => {
  test('a non-streaming request the client abandons is aborted upstream too, and still gets its row', async () => {
    // Long generations answer JSON only at the end: a client that gives up must stop the spend at once.
    fake('prov-c').next({ latencyMs: 1000, usage: FIXED_USAGE });
    const controller = new AbortController();
    const request = fetch(proxy.proxyBase + ENDPOINT['prov-c'], {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...credentialHeaders('prov-c', token),
        'x-proxy-user': 'gave-up-early',
      },
      body: JSON.stringify(requestBody('prov-c', 'slow to answer')),
      signal: controller.signal,
    });
    await fake('prov-c').waitForRequests(1);
    controller.abort();
    await expect(request).rejects.toThrow();
    await fake('prov-c').waitForAborted(1);
    expect(fake('prov-c').requests[0]!.response.completed).toBe(false);
    const rows = await proxy.waitForRows(token, 1, 'requester=gave-up-early');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ input_tokens: 0, output_tokens: 0, error: 'client disconnected' });
  });
});
