/**
 * Upstream faults: each gets the contracted status (or the provider's bytes,
 * untouched), the SDKs raise their typed errors, and the row says what happened.
 * UPSTREAM_TIMEOUT_MS is 1.5 s here so the 30 s limit can be tested quickly.
 * A client that goes away is in client-disconnect.test.ts.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createHash } from 'node:crypto';
import type { Behaviour } from '../fakes/behaviour';
import { callFake } from '../fakes/http-client';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk } from '../support/sdk-clients';
import {
  callProxy,
  credentialHeaders,
  ENDPOINT,
  expectChatError,
  expectMessagesError,
  requestBody,
} from './support/requests';
import { rowOf } from './support/rows';

const TIMEOUT_MS = 1500;
const FIXED_USAGE = { inputTokens: 1234, outputTokens: 567, cacheReadTokens: 0, cacheWriteTokens: 0 };

let proxy: ProxyServer;
let token: string;

beforeAll(async () => {
  proxy = await startProxy({ env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
  token = proxy.account.token;
});
afterAll(async () => {
  await proxy?.stop();
});
afterEach(() => proxy.fakes.reset());

const fake = (provider: ProviderId) => proxy.fakes.fakes[provider];
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What a client calling the fake directly with the same body reads (the reference for "unchanged"). */
async function directText(provider: ProviderId, body: Record<string, unknown>, behaviour: Behaviour): Promise<string> {
  fake(provider).next(behaviour);
  const response = await callFake(fake(provider), body, { headers: credentialHeaders(provider, 'direct-call-key') });
  return response.text();
}

async function sdkError(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('no response headers within the limit', () => {
  test('504 in the endpoint shape, the upstream call is abandoned, the row records the timeout', async () => {
    fake('prov-b').next({ hang: true });
    const result = await callProxy(proxy, { provider: 'prov-b', token });
    expect(result.status).toBe(504);
    expect(expectChatError(result.text)).toMatchObject({ type: 'server_error', code: 'upstream_timeout' });
    await fake('prov-b').waitForAborted(1);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({ status_code: 504, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
    expect(row.error).toMatch(/did not respond/);

    fake('prov-a').next({ hang: true });
    const messages = await callProxy(proxy, { provider: 'prov-a', token, stream: true });
    expect(messages.status).toBe(504);
    expect(expectMessagesError(messages.text).type).toBe('timeout_error');
  });

  test('the SDKs raise InternalServerError with status 504 (not their own client-side timeout)', async () => {
    fake('prov-a').next({ hang: true });
    const anthropicError = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-a', token, stream: false }),
    );
    expect(anthropicError).toBeInstanceOf(Anthropic.InternalServerError);
    expect((anthropicError as InstanceType<typeof Anthropic.APIError>).status).toBe(504);

    fake('prov-c').next({ hang: true });
    const openaiError = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-c', token, stream: true }),
    );
    expect(openaiError).toBeInstanceOf(OpenAI.InternalServerError);
    expect(openaiError).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect((openaiError as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
  });
});

describe('upstream resets the connection before its headers', () => {
  // `always`: a proxy that retries a dead kept-alive socket once must meet the reset again.
  test('502 in the endpoint shape, a row with the error, and SDKs raise InternalServerError 502', async () => {
    fake('prov-d').always({ resetBeforeHeaders: true });
    fake('prov-a').always({ resetBeforeHeaders: true });
    const result = await callProxy(proxy, { provider: 'prov-d', token });
    expect(result.status).toBe(502);
    expect(expectChatError(result.text)).toMatchObject({ type: 'server_error', code: 'upstream_unreachable' });
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({ status_code: 502, input_tokens: 0, output_tokens: 0 });
    expect(row.error).toMatch(/could not be reached/);

    const openaiError = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-d', token, stream: true }),
    );
    expect(openaiError).toBeInstanceOf(OpenAI.InternalServerError);
    expect((openaiError as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    const anthropicError = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-a', token, stream: false }),
    );
    expect(anthropicError).toBeInstanceOf(Anthropic.InternalServerError);
    expect((anthropicError as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
  });
});

describe('upstream resets mid-stream', () => {
  test('messages stream: the client gets an error event, the row keeps the input tokens seen and the error', async () => {
    fake('prov-a').next({ resetMidStream: 3, usage: FIXED_USAGE });
    const result = await callProxy(proxy, { provider: 'prov-a', token, stream: true });
    expect(result.status).toBe(200);
    expect(result.text).toMatch(
      /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*closed[^"]*"\}\}\n\n$/,
    );
    const row = await rowOf(proxy, token, result.requestId);
    // message_start carried the input count; the final output count never came.
    expect(row).toMatchObject({ status_code: 200, input_tokens: FIXED_USAGE.inputTokens });
    expect(row.output_tokens).toBeLessThan(FIXED_USAGE.outputTokens);
    expect(row.error).toMatch(/closed mid-response/);

    fake('prov-a').next({ resetMidStream: 3 });
    const error = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-a', token, stream: true }),
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
  });

  test('chat stream: an error chunk ends it, the OpenAI SDK raises, the row records the error and an estimate', async () => {
    fake('prov-d').next({ resetMidStream: 3, usage: FIXED_USAGE });
    const result = await callProxy(proxy, { provider: 'prov-d', token, stream: true });
    expect(result.status).toBe(200);
    const last = result.text.trimEnd().split('\n\n').at(-1)!;
    expect(expectChatError(last.replace(/^data: /, '')).message).toMatch(/closed/);
    const row = await rowOf(proxy, token, result.requestId);
    // No usage seen: input is estimated from the request's text ("user" + "Say hello.", 14 characters at 4 a token).
    expect(row).toMatchObject({ status_code: 200, input_tokens: 4, usage_estimated: true });
    expect(row.error).toMatch(/closed mid-response/);

    fake('prov-d').next({ resetMidStream: 3 });
    const error = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-d', token, stream: true }),
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });

  test('JSON body cut in half: the client sees a broken response, the row records the error', async () => {
    fake('prov-b').next({ resetMidStream: 1 });
    const response = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
      body: JSON.stringify(requestBody('prov-b')),
    });
    const requestId = response.headers.get('x-proxy-request-id')!;
    await expect(response.text().then((text) => JSON.parse(text))).rejects.toThrow();
    const row = await rowOf(proxy, token, requestId);
    expect(row).toMatchObject({ input_tokens: 0, output_tokens: 0 });
    expect(row.error).toMatch(/closed mid-response/);
  });
});

describe('slow and odd but valid answers', () => {
  test('a dripping stream that takes longer than the limit in total completes unchanged (the limit is on silence)', async () => {
    const body = { ...requestBody('prov-e', 'drip', true) };
    const behaviour: Behaviour = { usage: FIXED_USAGE, chunks: 12 };
    const expected = await directText('prov-e', body, behaviour);
    // About 3 limits in total, yet a few bytes every 10 ms.
    const bytesPerSecond = Math.ceil(Buffer.byteLength(expected) / ((3 * TIMEOUT_MS) / 1000));
    fake('prov-e').next({ ...behaviour, dripBytesPerSecond: bytesPerSecond });
    const result = await callProxy(proxy, { provider: 'prov-e', token, body });
    expect(result.status).toBe(200);
    expect(result.text).toBe(expected);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({
      status_code: 200,
      input_tokens: FIXED_USAGE.inputTokens,
      output_tokens: FIXED_USAGE.outputTokens,
    });
    expect(row.error).toBeUndefined();
  });

  test('a stream that goes silent for longer than the limit is ended with an error event; the row keeps what was seen', async () => {
    fake('prov-a').next({ chunkIntervalMs: TIMEOUT_MS * 2, chunks: 3, usage: FIXED_USAGE });
    const result = await callProxy(proxy, { provider: 'prov-a', token, stream: true });
    expect(result.status).toBe(200);
    expect(result.text).toMatch(/event: error\ndata: [^\n]*stalled[^\n]*\n\n$/);
    await fake('prov-a').waitForAborted(1);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({ status_code: 200, input_tokens: FIXED_USAGE.inputTokens });
    expect(row.error).toMatch(/stalled/);
  });

  test('malformed SSE blocks pass through byte for byte and the usage after them is counted', async () => {
    const body = { ...requestBody('prov-b', 'malformed', true), stream_options: { include_usage: true } };
    const behaviour: Behaviour = { malformedSse: true, usage: FIXED_USAGE };
    const expected = await directText('prov-b', body, behaviour);
    expect(expected).toContain('this line has no field name');
    fake('prov-b').next(behaviour);
    const result = await callProxy(proxy, { provider: 'prov-b', token, body });
    expect(result.text).toBe(expected);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({
      status_code: 200,
      input_tokens: FIXED_USAGE.inputTokens,
      output_tokens: FIXED_USAGE.outputTokens,
    });
  });

  test('malformed SSE blocks also pass when the proxy takes out the usage it asked for', async () => {
    const body = requestBody('prov-b', 'malformed hidden usage', true);
    const behaviour: Behaviour = { malformedSse: true, usage: FIXED_USAGE };
    const withUsage = await directText('prov-b', { ...body, stream_options: { include_usage: true } }, behaviour);
    // What the provider sends unasked: no usage-only chunk, no `usage` member on the others.
    const expected = await directText('prov-b', body, behaviour);
    expect(expected).toBe(
      withUsage.replace(/data: \{[^\n]*"choices":\[\][^\n]*"usage"[^\n]*\n\n/, '').replaceAll(',"usage":null', ''),
    );
    expect(expected).not.toBe(withUsage);
    fake('prov-b').next(behaviour);
    const result = await callProxy(proxy, { provider: 'prov-b', token, body });
    expect(result.text).toBe(expected);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({ input_tokens: FIXED_USAGE.inputTokens, output_tokens: FIXED_USAGE.outputTokens });
  });

  test('a 5 MB answer passes byte for byte, JSON and stream, with its usage counted', async () => {
    for (const [provider, stream] of [
      ['prov-c', false],
      ['prov-a', true],
    ] as const) {
      const body = requestBody(provider, `huge ${provider}`, stream);
      const behaviour: Behaviour = { hugeResponse: 5 * 1024 * 1024, usage: FIXED_USAGE };
      const expected = await directText(provider, body, behaviour);
      expect(expected.length).toBeGreaterThan(5_000_000);
      fake(provider).next(behaviour);
      const result = await callProxy(proxy, { provider, token, body });
      expect(result.status).toBe(200);
      expect(result.text.length).toBe(expected.length);
      expect(sha256(result.text)).toBe(sha256(expected));
      const row = await rowOf(proxy, token, result.requestId);
      expect(row).toMatchObject({
        status_code: 200,
        input_tokens: FIXED_USAGE.inputTokens,
        output_tokens: FIXED_USAGE.outputTokens,
      });
    }
  });

  test('a JSON body that stalls after its first bytes is cut at the limit; the row records the stall', async () => {
    // One byte every 2.5 s: silence longer than the 1.5 s limit between bytes.
    fake('prov-b').next({ dripBytesPerSecond: 0.4 });
    const response = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
      body: JSON.stringify(requestBody('prov-b', 'stalling json')),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-proxy-request-id')!;
    await expect(response.text().then((text) => JSON.parse(text))).rejects.toThrow();
    await fake('prov-b').waitForAborted(1);
    const row = await rowOf(proxy, token, requestId);
    expect(row.error).toMatch(/stalled/);
  });
});

describe('broken answers are passed on as they are, and recorded as such', () => {
  test('a non-JSON (HTML) error body: status and bytes passed through, row with the status and 0 tokens', async () => {
    const expected = await directText('prov-c', requestBody('prov-c'), { nonJsonErrorBody: true, status: 503 });
    // A 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
    for (let i = 0; i < 3; i++) fake('prov-c').next({ nonJsonErrorBody: true, status: 503 });
    const result = await callProxy(proxy, { provider: 'prov-c', token });
    expect(result.status).toBe(503);
    expect(result.headers.get('content-type')).toBe('text/html');
    expect(result.text).toBe(expected);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({ status_code: 503, input_tokens: 0, output_tokens: 0, cost_usd: 0 });

    for (let i = 0; i < 3; i++) fake('prov-c').next({ nonJsonErrorBody: true });
    const error = await sdkError(() =>
      callThroughSdk({ proxyBase: proxy.proxyBase, provider: 'prov-c', token, stream: false }),
    );
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  });

  test("a provider error's own message is recorded, with 0 tokens and cost", async () => {
    fake('prov-d').next({ status: 400, errorMessage: 'Invalid model: fam-nonexistent' });
    const result = await callProxy(proxy, { provider: 'prov-d', token });
    expect(result.status).toBe(400);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({
      status_code: 400,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      error: 'Invalid model: fam-nonexistent',
    });
  });

  test('a 200 with invalid JSON: passed through unchanged, 0 tokens, and never cached', async () => {
    const expected = await directText('prov-b', requestBody('prov-b', 'broken'), { invalidJson200: true });
    fake('prov-b').next({ invalidJson200: true });
    const result = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'broken', cache: 'true' });
    expect(result.status).toBe(200);
    expect(result.text).toBe(expected);
    const row = await rowOf(proxy, token, result.requestId);
    expect(row).toMatchObject({ status_code: 200, input_tokens: 0, output_tokens: 0, cached: false });

    const calls = fake('prov-b').requests.length;
    const again = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'broken', cache: 'true' });
    expect(again.headers.get('x-proxy-cache')).toBe('MISS');
    expect(fake('prov-b').requests.length).toBe(calls + 1);
  });
});

test('what the operator sees: each fault is one log line that names the error and its cause', () => {
  const lines = proxy.output().split('\n');
  const line = (status: number) =>
    lines.find((l) => l.includes('"message":"request failed"') && l.includes(`"status":${status}`));
  expect(line(504)).toMatch(/"error":"UpstreamTimeoutError"/);
  expect(line(502)).toMatch(/"error":"UpstreamUnreachableError"/);
  // Why the provider could not be reached (here: the connection was reset).
  expect(line(502)).toMatch(/ECONNRESET|socket hang up/);
});
