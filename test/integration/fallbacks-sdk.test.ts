/**
 * Fallbacks through the official SDKs (docs/fallbacks.md): a model answering 503 is retried, then
 * the model `x-proxy-fallback` names answers; a chat stream cut mid-answer is continued on the
 * fallback and reaches the client as one well-formed stream, and so is a messages stream; one that
 * cannot be continued ends with a clean error event. Each request leaves one exact usage row.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, expectedCostUsd, TEST_MODELS } from '../support/sdk-clients';

/** A model the fakes answer for, priced like the test model (its catalogue family). */
const FALLBACK: Record<'prov-a' | 'prov-b', string> = {
  'prov-a': 'claude-sonnet-4-5',
  'prov-b': 'gpt-4o-mini',
};

let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});
beforeEach(() => proxy.fakes.reset());

describe.each(['prov-a', 'prov-b'] as const)('%s', (provider: 'prov-a' | 'prov-b') => {
  it.each([false, true])('503 on every attempt at the model: the fallback answers (stream: %s)', async (stream) => {
    const fake = proxy.fakes.fakes[provider];
    for (let i = 0; i < 3; i++) fake.next({ status: 503 });
    const result = await callThroughSdk({
      proxyBase: proxy.proxyBase,
      provider,
      token: proxy.account.token,
      stream,
      headers: { 'x-proxy-fallback': FALLBACK[provider] },
    });
    // The client sees the model that answered, as that provider named it.
    expect(result.model).toBe(FALLBACK[provider]);
    expect(fake.requests.map((request) => (request.json as { model: string }).model)).toEqual([
      TEST_MODELS[provider],
      TEST_MODELS[provider],
      TEST_MODELS[provider],
      FALLBACK[provider],
    ]);
    // The header itself never goes upstream.
    for (const request of fake.requests) expect(request.headers['x-proxy-fallback']).toBeUndefined();

    const [row] = await proxy.rowsFor(proxy.account.token, [result.requestId]);
    const sent = fake.requests[3].response.usage!;
    expect(row).toMatchObject({
      status_code: 200,
      provider,
      model: FALLBACK[provider],
      input_tokens: sent.inputTokens,
      output_tokens: sent.outputTokens,
    });
    expect(row.usage_estimated).toBeUndefined();
    // Failed attempts without output cost nothing: the row costs the answer alone.
    expect(row.cost_usd).toBeCloseTo(expectedCostUsd(provider, sent), 9);
    const attempts = row.attempts as Array<{ target: string; status: number; duration_ms: number }>;
    expect(attempts.map(({ target, status }) => ({ target, status }))).toEqual([
      { target: `${provider}/${TEST_MODELS[provider]}`, status: 503 },
      { target: `${provider}/${TEST_MODELS[provider]}`, status: 503 },
      { target: `${provider}/${TEST_MODELS[provider]}`, status: 503 },
      { target: `${provider}/${FALLBACK[provider]}`, status: 200 },
    ]);
    for (const attempt of attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('every target hangs up without an answer: 502, and the row lists every attempt', async () => {
    const fake = proxy.fakes.fakes[provider];
    for (let i = 0; i < 6; i++) fake.next({ resetBeforeHeaders: true });
    const error = (await callThroughSdk({
      proxyBase: proxy.proxyBase,
      provider,
      token: proxy.account.token,
      stream: false,
      headers: { 'x-proxy-fallback': FALLBACK[provider] },
    }).catch((e: unknown) => e)) as { status: number; headers: Headers | Record<string, string> };
    expect(error.status).toBe(502);
    const requestId =
      error.headers instanceof Headers ? error.headers.get('x-proxy-request-id') : error.headers['x-proxy-request-id'];
    const [row] = await proxy.rowsFor(proxy.account.token, [requestId!]);
    expect(row.status_code).toBe(502);
    // As many attempts as requests the provider read, in order, each on its own target.
    const attempts = row.attempts as Array<{ target: string; status: unknown }>;
    expect(attempts.map(({ target }) => target)).toEqual(
      fake.requests.map((request) => `${provider}/${(request.json as { model: string }).model}`),
    );
    expect(new Set(attempts.map(({ target }) => target))).toEqual(
      new Set([`${provider}/${TEST_MODELS[provider]}`, `${provider}/${FALLBACK[provider]}`]),
    );
    for (const attempt of attempts) expect(attempt.status).toBe('reset');
  });

  it('a 400 goes back as the provider sent it, with no retry and no fallback', async () => {
    const fake = proxy.fakes.fakes[provider];
    fake.next({ status: 400, errorMessage: 'a field the provider refuses' });
    await expect(
      callThroughSdk({
        proxyBase: proxy.proxyBase,
        provider,
        token: proxy.account.token,
        stream: false,
        headers: { 'x-proxy-fallback': FALLBACK[provider] },
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('a field the provider refuses') });
    expect(fake.requests).toHaveLength(1);
  });
});

test('a chat stream cut mid-answer is continued on the fallback: one well-formed stream, one exact row', async () => {
  const fake = proxy.fakes.fakes['prov-b'];
  fake.next({ resetMidStream: 3 });
  const client = new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-fallback': FALLBACK['prov-b'] },
  });
  const { data, response } = await client.chat.completions
    .create({
      model: TEST_MODELS['prov-b'],
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    .withResponse();
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined | null;
  const models = new Set<string>();
  for await (const chunk of data) {
    models.add(chunk.model);
    text += chunk.choices[0]?.delta?.content ?? '';
    usage = chunk.usage ?? usage;
  }
  expect(fake.requests).toHaveLength(2);
  const [cut, continuation] = fake.requests;
  // The fallback was sent what the client already had, as the assistant's prefill.
  const messages = (continuation.json as { messages: Array<{ role: string; content: string }> }).messages;
  const prefill = messages[messages.length - 1];
  expect(prefill.role).toBe('assistant');
  expect(prefill.content.length).toBeGreaterThan(0);
  expect((continuation.json as { model: string }).model).toBe(FALLBACK['prov-b']);
  // The client got the first part, then the continuation, in one stream that ended normally.
  expect(text.startsWith(prefill.content)).toBe(true);
  expect(text.length).toBeGreaterThan(prefill.content.length);
  expect(models).toEqual(new Set([TEST_MODELS['prov-b'], FALLBACK['prov-b']]));
  expect(usage?.completion_tokens).toBe(continuation.response.usage!.outputTokens);

  const [row] = await proxy.rowsFor(proxy.account.token, [response.headers.get('x-proxy-request-id')!]);
  const sent = continuation.response.usage!;
  // The cut stream's output is an estimate (4 characters a token), added to the fallback's exact usage.
  const cutOutput = Math.ceil(prefill.content.length / 4);
  const cutInput = Math.ceil('userSay hello.'.length / 4);
  expect(row).toMatchObject({
    status_code: 200,
    model: FALLBACK['prov-b'],
    usage_estimated: true,
    input_tokens: sent.inputTokens + cutInput,
    output_tokens: sent.outputTokens + cutOutput,
  });
  expect(row.error).toBeUndefined();
  expect(row.cost_usd).toBeCloseTo(
    expectedCostUsd('prov-b', sent) +
      expectedCostUsd('prov-b', {
        inputTokens: cutInput,
        outputTokens: cutOutput,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      }),
    9,
  );
  expect(cut.response.completed).toBe(false);
});

/** An Anthropic client through the proxy with `x-proxy-fallback` set. */
const anthropicWithFallback = () =>
  new Anthropic({
    baseURL: proxy.proxyBase,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-fallback': FALLBACK['prov-a'] },
  });
const askAnthropic = {
  model: TEST_MODELS['prov-a'],
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'Say hello.' }],
};

test('a messages stream cut mid-answer is continued on the fallback: one well-formed message, one exact row', async () => {
  const fake = proxy.fakes.fakes['prov-a'];
  // Cut after message_start, the text block's start, a ping and two text deltas.
  fake.next({ resetMidStream: 5 });
  fake.next({ usage: { inputTokens: 40, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 } });
  const stream = anthropicWithFallback().messages.stream(askAnthropic);
  const types: string[] = [];
  stream.on('streamEvent', (event) => types.push(event.type));
  const message = await stream.finalMessage();
  const { response } = await stream.withResponse();

  expect(fake.requests).toHaveLength(2);
  const [cut, continuation] = fake.requests;
  const sent = continuation.json as { model: string; messages: Array<{ role: string; content: string }> };
  // The fallback was sent what the client had, as Anthropic's prefill: the last message, the assistant's.
  expect(sent.model).toBe(FALLBACK['prov-a']);
  expect(sent.messages.at(-1)).toEqual({ role: 'assistant', content: 'Sure! A proxy' });
  // The SDK's message: the prefix, then the continuation, once, in one text block.
  expect(message.content).toHaveLength(1);
  const whole = 'Sure! A proxy sits between your app and the provider, and it counts every token on the way back.';
  expect(message.content[0]).toMatchObject({ type: 'text', text: `Sure! A proxy${whole}` });
  expect(types.filter((type) => type === 'message_start')).toHaveLength(1);
  expect(types.filter((type) => type === 'message_delta')).toHaveLength(1);
  expect(types.filter((type) => type === 'message_stop')).toHaveLength(1);
  expect(message.stop_reason).toBe('end_turn');
  // The client's usage is the continuation's, as the fallback reported it.
  expect(message.usage).toMatchObject({ input_tokens: 40, output_tokens: 30 });

  const [row] = await proxy.rowsFor(proxy.account.token, [response.headers.get('x-proxy-request-id')!]);
  const used = continuation.response.usage!;
  // The cut stream's output is an estimate (4 characters a token), added to the fallback's exact usage.
  const cutOutput = Math.ceil('Sure! A proxy'.length / 4);
  const cutInput = Math.ceil('userSay hello.'.length / 4);
  expect(row).toMatchObject({
    status_code: 200,
    model: FALLBACK['prov-a'],
    usage_estimated: true,
    input_tokens: used.inputTokens + cutInput,
    output_tokens: used.outputTokens + cutOutput,
  });
  expect(row.error).toBeUndefined();
  expect(row.cost_usd).toBeCloseTo(
    expectedCostUsd('prov-a', used) +
      expectedCostUsd('prov-a', {
        inputTokens: cutInput,
        outputTokens: cutOutput,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      }),
    9,
  );
  expect(cut.response.completed).toBe(false);
});

test('a messages stream that stalls mid-answer is continued on the fallback once the stall limit passes', async () => {
  const fake = proxy.fakes.fakes['prov-a'];
  fake.next({ stallAfter: 5 });
  const client = new Anthropic({
    baseURL: proxy.proxyBase,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-fallback': FALLBACK['prov-a'], 'x-proxy-stall-timeout': '1' },
  });
  const message = await client.messages.stream(askAnthropic).finalMessage();
  const whole = 'Sure! A proxy sits between your app and the provider, and it counts every token on the way back.';
  expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: `Sure! A proxy${whole}` })]);
  expect((fake.requests[1]!.json as { messages: unknown[] }).messages.at(-1)).toEqual({
    role: 'assistant',
    content: 'Sure! A proxy',
  });
  // The stalled stream's connection is closed, not left to run on.
  await fake.waitForAborted(1);
});

test.each([
  [
    'cut inside a tool_use block',
    () => proxy.fakes.fakes['prov-a'].next({ fixture: 'prov-a/tool-use.sse', resetMidStream: 4 }),
    /tool_use block/,
    1,
  ],
  [
    'whose prefill the fallback refuses',
    () =>
      proxy.fakes.fakes['prov-a']
        .next({ resetMidStream: 5 })
        .next({ status: 400, errorMessage: 'This model does not support assistant message prefill.' }),
    /the fallback could not continue the answer/,
    2,
  ],
] as const)(
  'a messages stream %s ends with a clean error event, never a truncated success',
  async (_, arrange, why, requests) => {
    const fake = proxy.fakes.fakes['prov-a'];
    arrange();
    const stream = anthropicWithFallback().messages.stream(askAnthropic);
    const failure = await stream.finalMessage().then(
      () => new Error('the stream ended as a success'),
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    // The SDK raises the stream's own error event: the first failure, never the prefill's 400.
    expect(failure.message).toMatch(/upstream connection closed mid-response/);
    expect(failure.message).toMatch(why);
    expect(failure.message).not.toMatch(/does not support/);
    expect(fake.requests).toHaveLength(requests);
    const { response } = await stream.withResponse();
    const [row] = await proxy.rowsFor(proxy.account.token, [response.headers.get('x-proxy-request-id')!]);
    expect(row).toMatchObject({ status_code: 200, model: TEST_MODELS['prov-a'] });
    expect(String(row.error)).toMatch(why);
  },
);

test('the rate limit counts the client request once, and a fallback answer is never cached for the model asked for', async () => {
  const fake = proxy.fakes.fakes['prov-b'];
  const call = () =>
    callThroughSdk({
      proxyBase: proxy.proxyBase,
      provider: 'prov-b',
      token: proxy.account.token,
      stream: false,
      messages: [{ role: 'user', content: 'A question asked twice.' }],
      headers: { 'x-proxy-fallback': FALLBACK['prov-b'], 'x-proxy-cache': 'true' },
    });
  for (let i = 0; i < 3; i++) fake.next({ status: 503 });
  const servedByFallback = await call();
  expect(servedByFallback.model).toBe(FALLBACK['prov-b']);
  expect(servedByFallback.headers.get('x-proxy-cache')).toBe('MISS');
  const again = await call();
  // Four attempts upstream for the first request, one for the second: the limit counted two requests.
  const before = Number(servedByFallback.headers.get('x-proxy-ratelimit-remaining'));
  expect(Number(again.headers.get('x-proxy-ratelimit-remaining'))).toBe(before - 1);
  // Not a hit on the fallback's answer: the model asked for answers the second time.
  expect(again.headers.get('x-proxy-cache')).toBe('MISS');
  expect(again.model).toBe(TEST_MODELS['prov-b']);
  expect(fake.requests).toHaveLength(5);
});

test('a Responses stream cut mid-answer is not continued: it ends with the API’s error event', async () => {
  const fake = proxy.fakes.fakes['prov-b'];
  fake.next({ resetMidStream: 4 });
  const client = new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-fallback': FALLBACK['prov-b'] },
  });
  const { data, response } = await client.responses
    .create({ model: 'gpt-4.1-2025-04-14', input: 'Say hello.', stream: true })
    .withResponse();
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of data) events.push(event);
  // The SDK hands the error event on as the stream's last; nothing says the answer completed.
  expect(events.map((event) => event.type)).not.toContain('response.completed');
  expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringMatching(/closed mid-response/) });
  expect(fake.requests).toHaveLength(1);
  const [row] = await proxy.rowsFor(proxy.account.token, [response.headers.get('x-proxy-request-id')!]);
  expect(String(row.error)).toMatch(/closed mid-response/);
});
