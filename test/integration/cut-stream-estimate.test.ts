import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { csvRows } from '../support/csv';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * A stream the client aborts is billed by the provider for what it generated. Where the provider
 * never reported it (OpenAI's usage comes only at the end; Anthropic's message_start says output 1),
 * the row carries an estimate at 4 characters per token, marked `usage_estimated: true` in the row,
 * the API and the CSV export. Figures the provider did report stay exact.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const rowOf = async (requestId: string) => (await proxy.rowsFor(proxy.account.token, [requestId]))[0]!;
const PROMPT = 'p'.repeat(396);
// Every string of the body but the model: "user" (4) + the prompt (396) = 400 characters = 100 tokens.
const ESTIMATED_INPUT = 100;

describe('an aborted stream is recorded with an estimate of what the provider billed', () => {
  it('OpenAI SDK, aborted after the first chunks: input from the request text, output from the delivered text', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-b'].next({
      chunks: 200,
      chunkIntervalMs: 50,
      usage: { inputTokens: 100, outputTokens: 400, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    let delivered = '';
    for await (const chunk of stream) {
      delivered += chunk.choices[0]?.delta.content ?? '';
      if (delivered.length >= 20) break; // leaving the loop aborts the request
    }
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({
      status_code: 200,
      stream: true,
      usage_estimated: true,
      input_tokens: ESTIMATED_INPUT,
      priced: true,
      error: 'client disconnected',
    });
    const output = row.output_tokens as number;
    // At least what this client read; at most what the fake would have sent in all (~4 chars a chunk).
    expect(output).toBeGreaterThanOrEqual(Math.ceil(delivered.length / 4));
    expect(output).toBeLessThan(400);
    // gpt-4o-mini: $0.15 per million in, $0.60 out, in integer pico-dollars, rounded once to nanos.
    expect(row.cost_nanos).toBe(Math.round((ESTIMATED_INPUT * 150_000 + output * 600_000) / 1000));

    const csv = csvRows(
      await (await proxy.api(`/api/logs.csv?model=gpt-4o-mini`, { token: proxy.account.token })).text(),
    );
    const line = csv.find((cells) => cells[0] === row.id)!;
    expect(line[csv[0]!.indexOf('usage_estimated')]).toBe('true');
  });

  it('Anthropic SDK, aborted after the first text: input as reported, output from the delivered text', async () => {
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 });
    // Pieces of 16 KB of text: one delivered piece is about 4,096 tokens, far above message_start's 1.
    proxy.fakes.fakes['prov-a'].next({
      hugeResponse: 160_000,
      chunkIntervalMs: 100,
      usage: { inputTokens: 321, outputTokens: 50_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      messages: [{ role: 'user', content: PROMPT }],
    });
    const { response } = await stream.withResponse();
    let delivered = 0;
    await new Promise<void>((resolve) => {
      stream.on('text', (text) => {
        delivered += text.length;
        stream.abort();
        resolve();
      });
    });
    await stream.done().catch(() => undefined);
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ status_code: 200, usage_estimated: true, input_tokens: 321, priced: true });
    expect(row.output_tokens).toBeGreaterThanOrEqual(Math.ceil(delivered / 4));
    expect(row.output_tokens).toBeLessThan(50_000);
  });

  it('a stream that completes keeps the exact figures, with no estimate mark', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-b'].next({
      usage: { inputTokens: 1234, outputTokens: 56, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    for await (const _chunk of stream) void _chunk;
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ input_tokens: 1234, output_tokens: 56 });
    expect(row).not.toHaveProperty('usage_estimated');
  });
});

describe('a client that leaves after the answer ended, before its usage: exact row, answer cached', () => {
  const USAGE = { inputTokens: 5_000, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const cacheOn = { 'x-proxy-cache': 'true' };
  const unique = () => `leave after the answer ${Math.random().toString(36).slice(2)}`;

  it('OpenAI SDK stops reading at finish_reason: the usage chunk the proxy asked for is still read', async () => {
    const client = new OpenAI({
      baseURL: `${proxy.proxyBase}/prov-b/v1`,
      apiKey: proxy.account.token,
      maxRetries: 0,
      defaultHeaders: cacheOn,
    });
    const fake = proxy.fakes.fakes['prov-b'];
    // Each event 300 ms after the last: the usage chunk comes well after the client has gone.
    fake.next({ chunks: 3, chunkIntervalMs: 300, usage: USAGE });
    const body = {
      model: 'gpt-4o-mini',
      stream: true as const,
      messages: [{ role: 'user' as const, content: unique() }],
    };
    const { data: stream, response } = await client.chat.completions.create(body).withResponse();
    let finished = false;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.finish_reason) {
        finished = true;
        break; // leaving the loop aborts the request, before the usage chunk and [DONE]
      }
    }
    expect(finished).toBe(true);
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ status_code: 200, input_tokens: 5_000, output_tokens: 40, priced: true });
    expect(row.error).toBeUndefined();
    expect(row.usage_estimated).toBeUndefined();
    // The upstream body was read to its end, and the complete answer is a hit.
    expect(fake.requests.at(-1)!.response).toMatchObject({ completed: true, aborted: false });
    const calls = fake.requests.length;
    const again = await client.chat.completions.create(body).withResponse();
    expect(again.response.headers.get('x-proxy-cache')).toBe('HIT');
    let text = '';
    for await (const chunk of again.data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(fake.requests.length).toBe(calls);
  });

  it('Anthropic SDK stops reading after message_delta: exact usage, no "client disconnected", cached', async () => {
    const client = new Anthropic({
      baseURL: proxy.proxyBase,
      apiKey: proxy.account.token,
      maxRetries: 0,
      defaultHeaders: cacheOn,
    });
    const fake = proxy.fakes.fakes['prov-a'];
    fake.next({ chunks: 3, chunkIntervalMs: 300, usage: USAGE });
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      stream: true as const,
      messages: [{ role: 'user' as const, content: unique() }],
    };
    const { data: stream, response } = await client.messages.create(body).withResponse();
    for await (const event of stream) if (event.type === 'message_delta') break;
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ status_code: 200, input_tokens: 5_000, output_tokens: 40, priced: true });
    expect(row.error).toBeUndefined();
    expect(row.usage_estimated).toBeUndefined();
    const again = await client.messages.create(body).withResponse();
    expect(again.response.headers.get('x-proxy-cache')).toBe('HIT');
    for await (const event of again.data) void event;
  });

  it('the provider breaks off after the finish reason: an estimate, an error saying when the client left, nothing cached', async () => {
    const client = new OpenAI({
      baseURL: `${proxy.proxyBase}/prov-b/v1`,
      apiKey: proxy.account.token,
      maxRetries: 0,
      defaultHeaders: cacheOn,
    });
    const fake = proxy.fakes.fakes['prov-b'];
    // One content delta: the role chunk, the delta, the finish chunk; the connection dies a second later, before the usage.
    fake.next({ chunks: 1, chunkIntervalMs: 1_000, resetMidStream: 3, usage: USAGE });
    const body = {
      model: 'gpt-4o-mini',
      stream: true as const,
      messages: [{ role: 'user' as const, content: unique() }],
    };
    const { data: stream, response } = await client.chat.completions.create(body).withResponse();
    for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) break;
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({
      status_code: 200,
      usage_estimated: true,
      error: 'the client left after the answer ended; the provider closed its connection',
    });
    fake.next({ chunks: 1, usage: USAGE });
    const again = await client.chat.completions.create(body).withResponse();
    expect(again.response.headers.get('x-proxy-cache')).toBe('MISS');
    for await (const chunk of again.data) void chunk;
  });

  it('a client that leaves before the finish reason is still "client disconnected"', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-b'].next({ chunks: 6, chunkIntervalMs: 300, usage: USAGE });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: unique() }] })
      .withResponse();
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) break;
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ status_code: 200, error: 'client disconnected', usage_estimated: true });
  });
});
