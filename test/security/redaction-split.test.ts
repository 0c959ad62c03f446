/**
 * A credential the client would put back together is redacted too (SECURITY.md, "Split and escaped
 * credentials"): spread over the text of many stream deltas (server-sent events, Bedrock's
 * event-stream frames, base64 `chunk` events), or spelled with JSON escapes the client's parser
 * undoes. Each hostile upstream is the scripted provider; each client is the provider's real SDK.
 */
import Anthropic from '@anthropic-ai/sdk';
import {
  ConverseStreamCommand,
  InvokeModelWithResponseStreamCommand,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import OpenAI from 'openai';
import { bedrockClient, BEDROCK_MODEL } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import {
  startScriptedUpstream,
  type ScriptedRequest,
  type ScriptedUpstream,
} from '../reliability/support/scripted-upstream';
import { rowOf } from '../reliability/support/rows';

const TABLE_PREFIX = `split${Date.now().toString(36)}-`;
const OWN_KEY = 'sk-own-0123456789abcdef/ghijklmnopqrstu';

let upstream: ScriptedUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startProxy({
    tablePrefix: TABLE_PREFIX,
    env: {
      UPSTREAM_BASE_URL_PROV_A: upstream.url,
      UPSTREAM_BASE_URL_PROV_B: `${upstream.url}/v1`,
      UPSTREAM_BASE_URL_BEDROCK: upstream.url,
    },
  });
  proxy.secrets.add(OWN_KEY);
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

/** `text` in pieces of `size` characters. */
const piecesOf = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, i * size + size));

const chatEvent = (content: string) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

const absent = (text: string, secrets: string[]) => secrets.filter((secret) => text.includes(secret));

/**
 * The text a client joined, with the credential replaced: at most its first three characters (a
 * public prefix such as `sk-`) may go on before the fourth shows they begin it (HOLD_FROM_CHARACTERS).
 */
function expectRedacted(joined: string, before: string, after: string): void {
  expect(joined.startsWith(before)).toBe(true);
  expect(joined.endsWith(`[redacted]${after}`)).toBe(true);
  expect(joined.length - before.length - `[redacted]${after}`.length).toBeLessThanOrEqual(3);
}

test('a stored key streamed five characters per chat delta is redacted in the text the OpenAI SDK joins', async () => {
  upstream.next({
    status: 200,
    contentType: 'text/event-stream',
    async body(write) {
      for (const piece of piecesOf(`your key is ${proxy.storedKeys['prov-b']}, enjoy`, 5))
        await write(chatEvent(piece));
      await write(
        `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } })}\n\ndata: [DONE]\n\n`,
      );
    },
  });
  const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'split key' }],
    stream: true,
  });
  let joined = '';
  for await (const event of stream) joined += event.choices[0]?.delta?.content ?? '';
  expectRedacted(joined, 'your key is ', ', enjoy');
});

test('a stored key streamed five characters per Anthropic text delta is redacted in the text the Anthropic SDK joins; usage is still read', async () => {
  const events = [
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 7, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...piecesOf(`your key is ${proxy.storedKeys['prov-a']}`, 5).flatMap((text) => [
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    ]),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 11 } },
    { type: 'message_stop' },
  ];
  upstream.next({
    status: 200,
    contentType: 'text/event-stream',
    async body(write) {
      for (const event of events) await write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    },
  });
  const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 });
  const stream = client.messages.stream({
    model: 'claude-sonnet-4-6',
    max_tokens: 32,
    messages: [{ role: 'user', content: 'split key' }],
  });
  const message = await stream.finalMessage();
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  expectRedacted(text, 'your key is ', '');
  const requestId = (await stream.withResponse()).response.headers.get('x-proxy-request-id')!;
  const row = await rowOf(proxy, proxy.account.token, requestId);
  expect(row).toMatchObject({ input_tokens: 7, output_tokens: 11, status_code: 200 });
});

test('an error body quoting the caller’s own key with JSON escapes (\\u002d, \\/) does not give it back through the SDK’s JSON parser', async () => {
  upstream.next({
    status: 401,
    contentType: 'application/json',
    async body(write, request: ScriptedRequest) {
      const key = String(request.headers.authorization).slice('Bearer '.length);
      const escaped = key.replace('-', '\\u002d').replace('/', '\\/').replace('a', '\\u0061');
      await write(`{"error":{"message":"Incorrect API key provided: ${escaped}","type":"invalid_request_error",`);
      await write(`"code":"invalid_api_key","also":"${key.replace(/-/g, '\\u002D')}"}}`);
    },
  });
  const client = new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: OWN_KEY,
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-token': proxy.account.token },
  });
  const error = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'escaped key' }] })
    .then(
      () => undefined,
      (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
    );
  expect(error?.status).toBe(401);
  const parsed = JSON.stringify(error?.error);
  expect(absent(parsed + String(error?.message), [OWN_KEY])).toEqual([]);
  expect(parsed.split('[redacted]').length - 1).toBe(2);
});

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);
const frame = (eventType: string, payload: unknown) => {
  const headers: MessageHeaders = {
    ':event-type': { type: 'string', value: eventType },
    ':content-type': { type: 'string', value: 'application/json' },
    ':message-type': { type: 'string', value: 'event' },
  };
  return Buffer.from(codec.encode({ headers, body: Buffer.from(JSON.stringify(payload)) }));
};
const chunk = (event: unknown) =>
  frame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefgh' });

/** The access key id the proxy signed with, as Bedrock receives it. */
const keyIdOf = (request: ScriptedRequest) => /Credential=([^/]+)\//.exec(String(request.headers.authorization))![1]!;

test('the AWS key id split over two Bedrock contentBlockDelta frames is redacted in the text the AWS SDK joins', async () => {
  let keyId = '';
  upstream.next({
    status: 200,
    contentType: 'application/vnd.amazon.eventstream',
    async body(write, request) {
      keyId = keyIdOf(request);
      const half = Math.floor(keyId.length / 2);
      await write(frame('messageStart', { role: 'assistant', p: 'ab' }));
      await write(
        frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: `id ${keyId.slice(0, half)}` }, p: 'abc' }),
      );
      await write(
        frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: `${keyId.slice(half)} ok` }, p: 'abcd' }),
      );
      await write(frame('contentBlockStop', { contentBlockIndex: 0 }));
      await write(frame('messageStop', { stopReason: 'end_turn' }));
      await write(
        frame('metadata', { usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 }, metrics: { latencyMs: 9 } }),
      );
    },
  });
  const answer = await bedrockClient(proxy.proxyBase, proxy.account.token).send(
    new ConverseStreamCommand({
      modelId: BEDROCK_MODEL,
      messages: [{ role: 'user', content: [{ text: 'split id' }] }],
    }),
  );
  let joined = '';
  for await (const event of answer.stream as AsyncIterable<ConverseStreamOutput>)
    joined += event.contentBlockDelta?.delta?.text ?? '';
  expect(keyId.length).toBeGreaterThan(8);
  expectRedacted(joined, 'id ', ' ok');
});

test('the AWS key id split over two base64 chunk events of InvokeModelWithResponseStream is redacted in what the SDK decodes', async () => {
  let keyId = '';
  upstream.next({
    status: 200,
    contentType: 'application/vnd.amazon.eventstream',
    async body(write, request) {
      keyId = keyIdOf(request);
      const delta = (text: string) =>
        chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
      await write(Buffer.concat(piecesOf(`id ${keyId} ok`, 3).map(delta)));
      await write(
        chunk({
          type: 'message_stop',
          'amazon-bedrock-invocationMetrics': { inputTokenCount: 5, outputTokenCount: 3 },
        }),
      );
    },
  });
  const answer = await bedrockClient(proxy.proxyBase, proxy.account.token).send(
    new InvokeModelWithResponseStreamCommand({
      modelId: BEDROCK_MODEL,
      contentType: 'application/json',
      body: JSON.stringify({
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      }),
    }),
  );
  let joined = '';
  for await (const event of answer.body!) {
    const inner = JSON.parse(Buffer.from(event.chunk!.bytes!).toString('utf8')) as { delta?: { text?: string } };
    joined += inner.delta?.text ?? '';
  }
  expectRedacted(joined, 'id ', ' ok');
});
