/** The fault modes and scripted errors behave as the proxy's fault tests will assume. */
import { fixtureText } from '../fixtures/index';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { at, callFake, streamPayloads, usageOf } from './http-client';

let anthropic: FakeUpstream;
let openai: FakeUpstream;
let gemini: FakeUpstream;
beforeAll(async () => {
  [anthropic, openai, gemini] = await Promise.all([
    startFakeUpstream({ style: 'anthropic' }),
    startFakeUpstream({ style: 'openai', requireKey: 'sk-upstream-test-key' }),
    startFakeUpstream({ style: 'gemini' }),
  ]);
});
afterAll(() => Promise.all([anthropic.close(), openai.close(), gemini.close()]));
afterEach(() => [anthropic, openai, gemini].forEach((fake) => fake.reset()));

const body = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-6',
  max_tokens: 32,
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
});
const openaiAuth = { authorization: 'Bearer sk-upstream-test-key' };

describe('errors', () => {
  test('status with the native body, custom headers and the provider request id', async () => {
    anthropic.next({ status: 529, headers: { 'retry-after': '12' } });
    const response = await callFake(anthropic, body());
    expect(response.status).toBe(529);
    expect(response.headers.get('retry-after')).toBe('12');
    expect(response.headers.get('request-id')).toMatch(/^req_anthropic_\d+$/);
    expect(await response.text()).toBe(fixtureText('prov-a/error-overloaded.json').trimEnd());
    expect(anthropic.sentUsage.responses).toBe(0);
  });

  test('chat-completions error shape, and a missing or wrong key is refused when a key is required', async () => {
    expect((await callFake(openai, body())).status).toBe(401);
    const wrong = await callFake(openai, body(), { headers: { authorization: 'Bearer sk-other' } });
    expect(await wrong.json()).toEqual({
      error: { message: 'Invalid API key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
    expect((await callFake(openai, body(), { headers: openaiAuth })).status).toBe(200);
    expect(openai.requests.map((request) => request.response.status)).toEqual([401, 401, 200]);
  });

  test('the messages style takes its key in x-api-key or as a bearer token', async () => {
    const keyed = await startFakeUpstream({ style: 'anthropic', requireKey: 'sk-upstream-a' });
    try {
      expect((await callFake(keyed, body(), { headers: { 'x-api-key': 'sk-upstream-a' } })).status).toBe(200);
      expect((await callFake(keyed, body(), { headers: { authorization: 'Bearer sk-upstream-a' } })).status).toBe(200);
      const refused = await callFake(keyed, body(), { headers: { 'x-api-key': 'sk-proxy-not-a-provider-key' } });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({
        type: 'error',
        error: { type: 'authentication_error', message: 'Invalid API key' },
      });
    } finally {
      await keyed.close();
    }
  });

  test('gemini wraps its error in an array; errorMessage and errorBody are honoured', async () => {
    gemini.next({ status: 429, errorMessage: 'Quota exceeded' }).next({ status: 400, errorBody: 'plain words' });
    expect(await (await callFake(gemini, body())).json()).toEqual([
      { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } },
    ]);
    expect(await (await callFake(gemini, body())).text()).toBe('plain words');
  });

  test('non-JSON error body and invalid JSON with 200', async () => {
    anthropic.next({ nonJsonErrorBody: true }).next({ invalidJson200: true });
    const html = await callFake(anthropic, body());
    expect([html.status, html.headers.get('content-type')]).toEqual([502, 'text/html']);
    expect(await html.text()).toContain('<html>');
    const broken = await callFake(anthropic, body());
    expect(broken.status).toBe(200);
    await expect(broken.json()).rejects.toThrow();
  });
});

describe('connection faults', () => {
  test('resetBeforeHeaders: the client sees a connection error, not a response', async () => {
    anthropic.next({ resetBeforeHeaders: true });
    await expect(callFake(anthropic, body())).rejects.toThrow();
    expect(anthropic.aborted).toBe(0);
    expect((await callFake(anthropic, body())).status).toBe(200);
  });

  test('resetMidStream: headers and N events arrive, then the connection dies', async () => {
    anthropic.next({ resetMidStream: 3 });
    const response = await callFake(anthropic, body({ stream: true }));
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = '';
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          received += Buffer.from(value).toString();
        }
      })(),
    ).rejects.toThrow();
    expect(streamPayloads(received).map((payload) => payload.type)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
    ]);
    expect(anthropic.requests[0]!.response.completed).toBe(false);
    expect(anthropic.sentUsage.responses).toBe(0);
  });

  test('hang: no answer ever; a client that gives up is counted as aborted', async () => {
    anthropic.next({ hang: true });
    const controller = new AbortController();
    const pending = callFake(anthropic, body(), { signal: controller.signal });
    await anthropic.waitForRequests(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await anthropic.waitForAborted(1);
    expect(anthropic.requests[0]!.response.aborted).toBe(true);
  });

  test('a client that disconnects mid-stream is counted as aborted', async () => {
    anthropic.next({ chunks: 50, chunkIntervalMs: 20 });
    const controller = new AbortController();
    const response = await callFake(anthropic, body({ stream: true }), { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await anthropic.waitForAborted(1);
    expect(anthropic.sentUsage.responses).toBe(0);
  });
});

describe('timing', () => {
  test('latencyMs delays the headers; chunkIntervalMs spaces the events', async () => {
    anthropic.next({ latencyMs: 200 });
    let started = Date.now();
    await callFake(anthropic, body());
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);

    anthropic.next({ chunks: 5, chunkIntervalMs: 30 });
    started = Date.now();
    await (await callFake(anthropic, body({ stream: true }))).text();
    // 5 deltas plus the fixture's other events, 30 ms apart.
    expect(Date.now() - started).toBeGreaterThanOrEqual(30 * 10);
  });

  test('dripBytesPerSecond sends the same bytes slowly', async () => {
    anthropic.next({ dripBytesPerSecond: 2000 });
    const started = Date.now();
    const text = await (await callFake(anthropic, body())).text();
    const expected = fixtureText('prov-a/text.json');
    expect(text).toBe(expected);
    expect(Date.now() - started).toBeGreaterThanOrEqual((expected.length / 2000) * 1000 * 0.8);
  });
});

describe('odd bodies', () => {
  test('malformedSse: undecodable blocks in the stream, the valid events (usage included) still follow', async () => {
    openai.next({ malformedSse: true });
    const text = await (
      await callFake(openai, body({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } }), {
        headers: openaiAuth,
      })
    ).text();
    expect(text).toContain('this line has no field name');
    expect(text).toContain('data: not json at all');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(openai.sentUsage).toMatchObject({ inputTokens: 23, outputTokens: 14 });
  });

  test('hugeResponse: a 5 MB JSON answer with valid usage', async () => {
    anthropic.next({ hugeResponse: 5 * 1024 * 1024 });
    const json = (await (await callFake(anthropic, body())).json()) as Record<string, unknown>;
    expect(String(at(json, 'content', 0, 'text')).length).toBeGreaterThanOrEqual(5 * 1024 * 1024);
    expect(usageOf([{ type: 'message_start', message: json }])).toEqual({
      inputTokens: 19,
      outputTokens: 24,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  test('hugeResponse in a stream: many large deltas, then the usage events', async () => {
    anthropic.next({ hugeResponse: 1024 * 1024 });
    const payloads = streamPayloads(await (await callFake(anthropic, body({ stream: true }))).text());
    expect(payloads.filter((payload) => payload.type === 'content_block_delta').length).toBe(64);
    expect(usageOf(payloads).outputTokens).toBe(24);
  });
});
