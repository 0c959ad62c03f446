/**
 * Streams the proxy makes or ends itself:
 * - a cached JSON answer replayed to a streaming request carries a usage-only
 *   chunk (`choices: []`) only when the client asked for stream usage, for
 *   every chat-completions provider;
 * - a stream the proxy has to end early says why: the provider went silent, or
 *   its connection closed.
 */
import OpenAI from 'openai';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';
import { callProxy } from './support/requests';

const CHAT_PROVIDERS = ['prov-b', 'prov-c', 'prov-d', 'prov-e'] as const;
const TIMEOUT_MS = 1500;
let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy({ env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(async () => {
  await proxy?.stop();
});
afterEach(() => proxy.fakes.reset());

const sdk = (provider: string) =>
  new OpenAI({
    baseURL: `${proxy.proxyBase}/${provider}/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-cache': 'true' },
  });

describe.each(CHAT_PROVIDERS)('%s: a cached JSON answer served as a stream', (provider) => {
  const messages = [{ role: 'user' as const, content: `replay usage ${provider}` }];

  test('without stream_options.include_usage: every chunk has a choice (no usage-only chunk)', async () => {
    const client = sdk(provider);
    const stored = await client.chat.completions
      .create({ model: TEST_MODELS[provider], messages, max_tokens: 16 })
      .withResponse();
    expect(stored.response.headers.get('x-proxy-cache')).toBe('MISS');

    const before = proxy.fakes.fakes[provider].requests.length;
    const { data: stream, response } = await client.chat.completions
      .create({ model: TEST_MODELS[provider], messages, max_tokens: 16, stream: true })
      .withResponse();
    expect(response.headers.get('x-proxy-cache')).toBe('HIT');
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(proxy.fakes.fakes[provider].requests.length).toBe(before);
    expect(chunks.length).toBeGreaterThan(1);
    // Code that reads choices[0] of every chunk, as many clients do, works.
    for (const chunk of chunks) expect(chunk.choices[0]).toBeDefined();
    expect(chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('')).toBe(
      stored.data.choices[0]!.message.content,
    );
  });

  test('with stream_options.include_usage: the last chunk carries the usage', async () => {
    const client = sdk(provider);
    const asked = [{ role: 'user' as const, content: `replay usage asked ${provider}` }];
    const stored = await client.chat.completions.create({
      model: TEST_MODELS[provider],
      messages: asked,
      max_tokens: 16,
    });
    const stream = await client.chat.completions.create({
      model: TEST_MODELS[provider],
      messages: asked,
      max_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.prompt_tokens).toBe(stored.usage?.prompt_tokens);
    expect(last.usage?.completion_tokens).toBe(stored.usage?.completion_tokens);
  });
});

describe('a stream the proxy ends early names the cause', () => {
  const errorChunk = (text: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith('data: {"error"'));
    return line
      ? (JSON.parse(line.slice('data: '.length)) as { error: { code: string; message: string } }).error
      : undefined;
  };

  test('the provider closed the connection mid-stream: upstream_connection_closed', async () => {
    proxy.fakes.fakes['prov-b'].next({ resetMidStream: 2 });
    const result = await callProxy(proxy, {
      provider: 'prov-b',
      token: proxy.account.token,
      stream: true,
      prompt: 'cut by reset',
    });
    expect(result.status).toBe(200);
    expect(errorChunk(result.text)).toMatchObject({
      code: 'upstream_connection_closed',
      message: 'upstream connection closed mid-response',
    });
  });

  test('the provider went silent mid-stream: upstream_stalled', async () => {
    proxy.fakes.fakes['prov-b'].next({ chunkIntervalMs: TIMEOUT_MS * 3, chunks: 3 });
    const result = await callProxy(proxy, {
      provider: 'prov-b',
      token: proxy.account.token,
      stream: true,
      prompt: 'cut by silence',
    });
    expect(result.status).toBe(200);
    expect(errorChunk(result.text)).toMatchObject({ code: 'upstream_stalled' });
    expect(errorChunk(result.text)!.message).toMatch(/stalled/);
  });
});
