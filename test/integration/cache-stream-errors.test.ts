/**
 * A stream that reports an error inside it and still ends (its terminal event, or the rest of its
 * frames, follows the error) is not a complete answer: nothing is stored, the row records the
 * error, the client gets every byte, and the next identical request with `x-proxy-cache: true`
 * is a MISS that reaches the provider. A Responses stream that ends `response.incomplete` (the
 * output limit reached) is a complete answer, and is stored. Through the official SDKs, against
 * fakes speaking each API's own wire format.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ConverseStreamCommand, ThrottlingException } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { BEDROCK_MODEL, bedrockClient } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const CACHE = { 'x-proxy-cache': 'true' };
const question = () => `stream error ${randomBytes(6).toString('hex')}`;

interface Call {
  cacheStatus: string | null;
  requestId: string;
  /** What reading the stream raised (undefined: it ended normally). */
  error: unknown;
  /** The events the SDK handed over, as JSON (to compare a hit with the answer it replays). */
  events: string[];
}

/** Reads the whole stream as an application would, keeping what it raised instead of throwing. */
async function readAll(started: Promise<{ data: AsyncIterable<unknown>; response: Response }>): Promise<Call> {
  const { data, response } = await started;
  const events: string[] = [];
  const error = await (async () => {
    for await (const event of data) events.push(JSON.stringify(event));
  })().then(
    () => undefined,
    (raised: unknown) => raised,
  );
  return {
    cacheStatus: response.headers.get('x-proxy-cache'),
    requestId: response.headers.get('x-proxy-request-id')!,
    error,
    events,
  };
}

async function rowOf(call: Call): Promise<Record<string, unknown>> {
  return (await proxy.rowsFor(proxy.account.token, [call.requestId]))[0]!;
}

const openai = () =>
  new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: proxy.account.token,
    defaultHeaders: CACHE,
    maxRetries: 0,
  });

const anthropic = () =>
  new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, defaultHeaders: CACHE, maxRetries: 0 });

describe('a stream that reports an error and then ends is not stored', () => {
  it('chat completions: an `{"error":…}` chunk followed by `data: [DONE]`', async () => {
    const fake = proxy.fakes.fakes['prov-b'];
    const content = question();
    const ask = () =>
      readAll(
        openai()
          .chat.completions.create({
            model: TEST_MODELS['prov-b'],
            messages: [{ role: 'user', content }],
            stream: true,
          })
          .withResponse(),
      );

    fake.next({ errorBeforeEnd: 'The server had an error while processing your request.' });
    const failed = await ask();
    expect(failed.cacheStatus).toBe('MISS');
    // The client got the error chunk as the provider sent it: the SDK raises it.
    expect(failed.error).toBeInstanceOf(OpenAI.APIError);
    expect((failed.error as Error).message).toContain('The server had an error while processing your request.');
    expect(await rowOf(failed)).toMatchObject({
      status_code: 200,
      error: 'The server had an error while processing your request.',
      cached: false,
    });

    const callsBefore = fake.requests.length;
    const retried = await ask();
    expect(retried.cacheStatus).toBe('MISS');
    expect(retried.error).toBeUndefined();
    expect(fake.requests.length).toBe(callsBefore + 1);

    // The good answer is stored: the error did not switch the cache off for this question.
    const again = await ask();
    expect(again.cacheStatus).toBe('HIT');
    expect(fake.requests.length).toBe(callsBefore + 1);
  });

  it('Anthropic messages: an `event: error` followed by `message_stop`', async () => {
    const fake = proxy.fakes.fakes['prov-a'];
    const content = question();
    const ask = () =>
      readAll(
        anthropic()
          .messages.create({
            model: TEST_MODELS['prov-a'],
            max_tokens: 64,
            messages: [{ role: 'user', content }],
            stream: true,
          })
          .withResponse(),
      );

    fake.next({ errorBeforeEnd: 'Overloaded' });
    const failed = await ask();
    expect(failed.cacheStatus).toBe('MISS');
    expect(failed.error).toBeInstanceOf(Anthropic.APIError);
    expect((failed.error as Error).message).toContain('Overloaded');
    expect(await rowOf(failed)).toMatchObject({ status_code: 200, error: 'Overloaded', cached: false });

    const callsBefore = fake.requests.length;
    const retried = await ask();
    expect(retried.cacheStatus).toBe('MISS');
    expect(retried.error).toBeUndefined();
    expect(fake.requests.length).toBe(callsBefore + 1);
  });

  it('Responses API: a stream that ends `response.failed`', async () => {
    const fake = proxy.fakes.fakes['prov-b'];
    const input = question();
    const ask = () => readAll(openai().responses.create({ model: 'gpt-4.1', input, stream: true }).withResponse());

    fake.next({ fixture: 'endpoints/openai-responses-failed.sse' });
    const failed = await ask();
    expect(failed.cacheStatus).toBe('MISS');
    expect(failed.error).toBeUndefined();
    expect(failed.events.map((event) => (JSON.parse(event) as { type: string }).type).at(-1)).toBe('response.failed');
    expect(await rowOf(failed)).toMatchObject({
      status_code: 200,
      error: 'The model failed to generate a response.',
      input_tokens: 40,
      cached: false,
    });

    const callsBefore = fake.requests.length;
    const retried = await ask();
    expect(retried.cacheStatus).toBe('MISS');
    expect(retried.events.map((event) => (JSON.parse(event) as { type: string }).type).at(-1)).toBe(
      'response.completed',
    );
    expect(fake.requests.length).toBe(callsBefore + 1);
  });

  it('Bedrock ConverseStream: an exception frame followed by the rest of the stream', async () => {
    const fake = proxy.fakes.bedrock;
    const text = question();
    const client = bedrockClient(proxy.proxyBase, proxy.account.token, CACHE);
    let headers: Record<string, string> = {};
    client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        headers = (result.response as { headers: Record<string, string> }).headers;
        return result;
      },
      { step: 'deserialize', name: 'responseHeaders' },
    );
    const ask = async (): Promise<Call> => {
      const answer = await client.send(
        new ConverseStreamCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text }] }] }),
      );
      const events: string[] = [];
      const error = await (async () => {
        for await (const event of answer.stream!) events.push(JSON.stringify(event));
      })().then(
        () => undefined,
        (raised: unknown) => raised,
      );
      return {
        cacheStatus: headers['x-proxy-cache'] ?? null,
        requestId: headers['x-proxy-request-id']!,
        error,
        events,
      };
    };

    fake.next({
      streamException: { type: 'throttlingException', message: 'Rate exceeded mid-stream.', thenEnd: true },
    });
    const failed = await ask();
    expect(failed.cacheStatus).toBe('MISS');
    expect(failed.error).toBeInstanceOf(ThrottlingException);
    expect(await rowOf(failed)).toMatchObject({
      status_code: 200,
      error: 'throttlingException: Rate exceeded mid-stream.',
      cached: false,
    });

    const callsBefore = fake.requests.length;
    const retried = await ask();
    expect(retried.cacheStatus).toBe('MISS');
    expect(retried.error).toBeUndefined();
    expect(fake.requests.length).toBe(callsBefore + 1);

    const again = await ask();
    expect(again.cacheStatus).toBe('HIT');
    expect(again.error).toBeUndefined();
    expect(fake.requests.length).toBe(callsBefore + 1);
  });
});

describe('a Responses stream that ends `response.incomplete` is a complete answer', () => {
  it('is stored: the next identical request is a HIT with the same events and no provider call', async () => {
    const fake = proxy.fakes.fakes['prov-b'];
    const input = question();
    const ask = () => readAll(openai().responses.create({ model: 'gpt-4.1', input, stream: true }).withResponse());

    fake.next({ fixture: 'endpoints/openai-responses-incomplete.sse' });
    const first = await ask();
    expect(first.cacheStatus).toBe('MISS');
    expect(first.error).toBeUndefined();
    const row = await rowOf(first);
    expect(row).toMatchObject({ status_code: 200, input_tokens: 61, output_tokens: 16, cached: false });
    expect(row.error ?? undefined).toBeUndefined();

    const callsBefore = fake.requests.length;
    const hit = await ask();
    expect(hit.cacheStatus).toBe('HIT');
    expect(fake.requests.length).toBe(callsBefore);
    const types = hit.events.map((event) => (JSON.parse(event) as { type: string }).type);
    expect(types.at(-1)).toBe('response.incomplete');
  });
});
