/**
 * A cached Bedrock answer serves the other form of the same question (docs/caching.md, "How a hit
 * is served"), through the AWS SDK as docs/bedrock.md sets it up, against the fake Bedrock:
 * Converse ↔ ConverseStream, and InvokeModel ↔ InvokeModelWithResponseStream for Anthropic's
 * messages body. The second call makes no upstream request, and what the SDK parses is the first
 * answer. A body that does not convert exactly (another model family's) is a miss, forwarded.
 */
import {
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  type BedrockRuntimeClient,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import { randomBytes } from 'node:crypto';
import { BEDROCK_COST_NANOS, BEDROCK_MODEL as MODEL, bedrockClient } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const question = () => `forms ${randomBytes(6).toString('hex')}`;
const messages = (text: string) => [{ role: 'user' as const, content: [{ text }] }];
const anthropicBody = (text: string) =>
  JSON.stringify({
    anthropic_version: 'bedrock-2023-05-31',
    max_tokens: 200,
    messages: [{ role: 'user', content: text }],
  });

/** Each request's `x-proxy-cache` answer, read off the responses the client received. */
function withCacheStatus(client: BedrockRuntimeClient): string[] {
  const seen: string[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      seen.push(String((result.response as { headers: Record<string, string> }).headers['x-proxy-cache']));
      return result;
    },
    { step: 'deserialize', name: 'cacheStatus' },
  );
  return seen;
}

/** What a ConverseStream consumer folds the SDK's events into: the fields of a Converse answer (text blocks, as the fake sends). */
async function foldConverseStream(stream: AsyncIterable<ConverseStreamOutput>): Promise<Record<string, unknown>> {
  const texts: string[] = [];
  const folded: Record<string, unknown> = {};
  let role: unknown;
  for await (const event of stream) {
    if (event.messageStart) role = event.messageStart.role;
    if (event.contentBlockDelta?.delta?.text !== undefined)
      texts[event.contentBlockDelta.contentBlockIndex!] =
        (texts[event.contentBlockDelta.contentBlockIndex!] ?? '') + event.contentBlockDelta.delta.text;
    if (event.messageStop) folded.stopReason = event.messageStop.stopReason;
    if (event.metadata) Object.assign(folded, { usage: event.metadata.usage, metrics: event.metadata.metrics });
  }
  return { output: { message: { role, content: texts.map((text) => ({ text })) } }, ...folded };
}

interface AnthropicEvent {
  type: string;
  index: number;
  message: Record<string, unknown>;
  content_block: { type: string; text: string };
  delta: { text: string };
  usage: Record<string, unknown>;
}

/** The Anthropic messages body a stream of `chunk` events carries, folded as Anthropic's stream is (text blocks). */
async function foldInvokeStream(
  body: AsyncIterable<{ chunk?: { bytes?: Uint8Array } }>,
): Promise<Record<string, unknown>> {
  let message: Record<string, unknown> = {};
  const content: Array<{ type: string; text: string }> = [];
  for await (const event of body) {
    const data = JSON.parse(Buffer.from(event.chunk!.bytes!).toString('utf8')) as AnthropicEvent;
    if (data.type === 'message_start') message = { ...data.message };
    if (data.type === 'content_block_start') content[data.index] = { ...data.content_block };
    if (data.type === 'content_block_delta') content[data.index]!.text += data.delta.text;
    if (data.type === 'message_delta')
      message = { ...message, ...data.delta, usage: { ...(message.usage as object), ...data.usage } };
  }
  return { ...message, content };
}

const converseFields = (answer: Record<string, unknown>) => ({
  output: answer.output,
  stopReason: answer.stopReason,
  usage: answer.usage,
  metrics: answer.metrics,
});

async function hitRow(token: string, user: string): Promise<void> {
  const rows = await proxy.waitForRows(token, 2, `requester=${encodeURIComponent(user)}`);
  const [hit, miss] = [rows.find((row) => row.cached === true), rows.find((row) => row.cached === false)];
  expect(miss).toMatchObject({ cost_nanos: BEDROCK_COST_NANOS, priced: true });
  expect(hit).toMatchObject({
    provider: 'bedrock',
    model: MODEL,
    cost_nanos: 0,
    input_tokens: 0,
    output_tokens: 0,
    saved_nanos: BEDROCK_COST_NANOS,
  });
}

describe.each([
  ['stored', () => ({ credential: proxy.account.token, headers: {} as Record<string, string> })],
  [
    'pass-through',
    () => {
      const key = `ABSKQmVkcm9ja0FQSUtleS${randomBytes(16).toString('hex')}`;
      proxy.secrets.add(key);
      return { credential: key, headers: { 'x-proxy-token': proxy.account.token } as Record<string, string> };
    },
  ],
] as const)('%s mode', (_mode, credentials) => {
  function client(user: string) {
    const { credential, headers } = credentials();
    const bedrock = bedrockClient(proxy.proxyBase, credential, {
      ...headers,
      'x-proxy-cache': 'true',
      'x-proxy-user': user,
    });
    return { bedrock, statuses: withCacheStatus(bedrock) };
  }

  it('a stored Converse answer serves ConverseStream: an event stream the SDK parses into the same answer', async () => {
    const user = `converse-to-stream-${randomBytes(4).toString('hex')}`;
    const { bedrock, statuses } = client(user);
    const text = question();
    const first = await bedrock.send(new ConverseCommand({ modelId: MODEL, messages: messages(text) }));
    const upstream = proxy.fakes.bedrock.requests.length;
    const second = await bedrock.send(new ConverseStreamCommand({ modelId: MODEL, messages: messages(text) }));
    expect(await foldConverseStream(second.stream!)).toEqual(
      converseFields(first as unknown as Record<string, unknown>),
    );
    expect(proxy.fakes.bedrock.requests.length).toBe(upstream);
    expect(statuses).toEqual(['MISS', 'HIT']);
    await hitRow(proxy.account.token, user);
  });

  it('a stored ConverseStream answer serves Converse: the JSON answer Converse gives', async () => {
    const user = `stream-to-converse-${randomBytes(4).toString('hex')}`;
    const { bedrock, statuses } = client(user);
    const text = question();
    const first = await foldConverseStream(
      (await bedrock.send(new ConverseStreamCommand({ modelId: MODEL, messages: messages(text) }))).stream!,
    );
    await proxy.waitForRows(proxy.account.token, 1, `requester=${encodeURIComponent(user)}`);
    const upstream = proxy.fakes.bedrock.requests.length;
    const second = await bedrock.send(new ConverseCommand({ modelId: MODEL, messages: messages(text) }));
    expect(converseFields(second as unknown as Record<string, unknown>)).toEqual(first);
    expect(proxy.fakes.bedrock.requests.length).toBe(upstream);
    expect(statuses).toEqual(['MISS', 'HIT']);
    // The same answer the fake gives Converse itself.
    const direct = await bedrockClient(proxy.proxyBase, proxy.account.token).send(
      new ConverseCommand({ modelId: MODEL, messages: messages(text) }),
    );
    expect(converseFields(second as unknown as Record<string, unknown>)).toEqual(
      converseFields(direct as unknown as Record<string, unknown>),
    );
    await hitRow(proxy.account.token, user);
  });

  it('a stored InvokeModel answer (Anthropic) serves InvokeModelWithResponseStream: chunks that fold into the same message', async () => {
    const user = `invoke-to-stream-${randomBytes(4).toString('hex')}`;
    const { bedrock, statuses } = client(user);
    const body = anthropicBody(question());
    const first = JSON.parse(
      Buffer.from((await bedrock.send(new InvokeModelCommand({ modelId: MODEL, body }))).body).toString('utf8'),
    ) as unknown;
    const upstream = proxy.fakes.bedrock.requests.length;
    const second = await bedrock.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body }));
    expect(await foldInvokeStream(second.body!)).toEqual(first);
    expect(proxy.fakes.bedrock.requests.length).toBe(upstream);
    expect(statuses).toEqual(['MISS', 'HIT']);
    await hitRow(proxy.account.token, user);
  });

  it('a stored InvokeModelWithResponseStream answer (Anthropic) serves InvokeModel: the message InvokeModel gives', async () => {
    const user = `stream-to-invoke-${randomBytes(4).toString('hex')}`;
    const { bedrock, statuses } = client(user);
    const body = anthropicBody(question());
    const first = await foldInvokeStream(
      (await bedrock.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body }))).body!,
    );
    await proxy.waitForRows(proxy.account.token, 1, `requester=${encodeURIComponent(user)}`);
    const upstream = proxy.fakes.bedrock.requests.length;
    const second = JSON.parse(
      Buffer.from((await bedrock.send(new InvokeModelCommand({ modelId: MODEL, body }))).body).toString('utf8'),
    ) as unknown;
    expect(second).toEqual(first);
    expect(proxy.fakes.bedrock.requests.length).toBe(upstream);
    expect(statuses).toEqual(['MISS', 'HIT']);
    await hitRow(proxy.account.token, user);
  });
});

it("Anthropic's Bedrock SDK: a stored messages.create answer serves messages.stream, whose final message is the same", async () => {
  const anthropic = new AnthropicBedrock({
    baseURL: `${proxy.proxyBase}/bedrock`,
    apiKey: proxy.account.token,
    awsRegion: 'us-east-1',
    maxRetries: 0,
    defaultHeaders: { 'x-proxy-cache': 'true' },
  });
  const request = { model: MODEL, max_tokens: 200, messages: [{ role: 'user' as const, content: question() }] };
  const first = await anthropic.messages.create(request);
  const upstream = proxy.fakes.bedrock.requests.length;
  const streamed = await anthropic.messages.stream(request).finalMessage();
  // `parsed_output` is the SDK's own addition to a streamed message (structured outputs), not the provider's.
  expect({ ...streamed, parsed_output: undefined }).toEqual(first);
  expect(proxy.fakes.bedrock.requests.length).toBe(upstream);
});

it("another model family's body (Llama) stored as JSON is a miss for the stream: forwarded, never converted", async () => {
  const llama = 'meta.llama3-3-70b-instruct-v1:0';
  const body = JSON.stringify({ prompt: question(), max_gen_len: 50 });
  const send = (operation: string) =>
    fetch(`${proxy.proxyBase}/bedrock/model/${llama}/${operation}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${proxy.account.token}`,
        'content-type': 'application/json',
        'x-proxy-cache': 'true',
      },
      body,
    });
  const json = await send('invoke');
  expect([json.status, json.headers.get('x-proxy-cache')]).toEqual([200, 'MISS']);
  await json.arrayBuffer();
  const upstream = proxy.fakes.bedrock.requests.length;
  const stream = await send('invoke-with-response-stream');
  expect([stream.status, stream.headers.get('x-proxy-cache'), stream.headers.get('content-type')]).toEqual([
    200,
    'MISS',
    'application/vnd.amazon.eventstream',
  ]);
  expect(Buffer.from(await stream.arrayBuffer())).toEqual(proxy.fakes.bedrock.requests.at(-1)!.response.body);
  expect(proxy.fakes.bedrock.requests.length).toBe(upstream + 1);
  // The stream that answered is now the stored entry: its own form is served from it.
  const again = await send('invoke-with-response-stream');
  expect(again.headers.get('x-proxy-cache')).toBe('HIT');
  await again.arrayBuffer();
});
