/**
 * A compressed Bedrock answer is redacted like a plain one (SECURITY.md, "Keys"): stored and
 * pass-through mode, every coding the proxy asks for and two stacked, JSON, both AWS event streams
 * (the credential in a frame's payload, or base64 inside a `chunk` event) and a 403, each quoting
 * what Bedrock received (in stored mode the signature material: session token, signature, key id),
 * the proxy token and its secret part. The client gets identity bytes and whole frames the AWS SDK
 * can read; a stream that stops being frames is cut there.
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { EventStreamDecoder } from '../../lambda/eventstream/event-stream-decoder';
import {
  startScriptedUpstream,
  type ScriptedRequest,
  type ScriptedUpstream,
} from '../reliability/support/scripted-upstream';
import { BEDROCK_MODEL } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { CODINGS, present, writeInThirds, type Mode, type RawAnswer } from './support/encodings';
import { tokenSecret } from './support/observed';

let upstream: ScriptedUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startProxy({ env: { UPSTREAM_BASE_URL_BEDROCK: upstream.url, RATE_LIMIT_PER_MINUTE: '1000' } });
  proxy.secrets.add(BEDROCK_KEY);
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

const BEDROCK_KEY = `ABSKQmVkcm9ja0FQSUtleS${createHash('sha256').update('enc-bedrock').digest('hex').slice(0, 32)}`;
type BedrockShape = '200 json' | '200 converse stream' | '200 invoke stream' | '403 json';
const BEDROCK_SHAPES: BedrockShape[] = ['200 json', '200 converse stream', '200 invoke stream', '403 json'];
const OPERATION: Record<BedrockShape, string> = {
  '200 json': 'converse',
  '200 converse stream': 'converse-stream',
  '200 invoke stream': 'invoke-with-response-stream',
  '403 json': 'converse',
};

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

/** What Bedrock received: in stored mode the signature material, in pass-through mode the caller's key. */
function bedrockReceived(request: ScriptedRequest): string[] {
  const authorization = String(request.headers.authorization ?? '');
  if (authorization.startsWith('Bearer ')) return [authorization.slice(7)];
  const keyId = /Credential=([^/]+)\//.exec(authorization)![1]!;
  const signature = /Signature=([0-9a-f]+)/.exec(authorization)![1]!;
  return [String(request.headers['x-amz-security-token']), signature, keyId];
}

/** A careless Bedrock quoting every credential of the request, in each shape. */
function bedrockBody(shape: BedrockShape, request: ScriptedRequest): Buffer {
  const quote = `received ${bedrockReceived(request).join(' and ')}, token ${proxy.account.token}, secret ${tokenSecret(proxy.account.token)}`;
  if (shape === '403 json') return Buffer.from(JSON.stringify({ message: `bad ${quote}` }));
  const usage = { inputTokens: 5, outputTokens: 3, totalTokens: 8 };
  if (shape === '200 json')
    return Buffer.from(
      JSON.stringify({
        output: { message: { role: 'assistant', content: [{ text: quote }] } },
        stopReason: 'end_turn',
        usage,
        metrics: { latencyMs: 9 },
      }),
    );
  if (shape === '200 converse stream') {
    return Buffer.concat([
      frame('messageStart', { role: 'assistant', p: 'ab' }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: quote }, p: 'abc' }),
      frame('contentBlockStop', { contentBlockIndex: 0 }),
      frame('messageStop', { stopReason: 'end_turn' }),
      frame('metadata', { usage, metrics: { latencyMs: 9 } }),
    ]);
  }
  return Buffer.concat([
    chunk({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    }),
    chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: quote } }),
    chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
    chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 5, outputTokenCount: 3 } }),
  ]);
}

/** Every payload of an event stream as the AWS SDK reads it (base64 `bytes` decoded); throws on a frame that is not whole. */
function eventStreamText(bytes: Buffer): string {
  const decoder = new EventStreamDecoder();
  const messages = decoder.push(bytes);
  decoder.end();
  if (decoder.problem) throw new Error(decoder.problem);
  return messages
    .map((message) => {
      const payload = JSON.parse(message.payload.toString('utf8')) as { bytes?: string };
      return payload.bytes === undefined
        ? JSON.stringify(payload)
        : Buffer.from(payload.bytes, 'base64').toString('utf8');
    })
    .join('\n');
}

function bedrockCall(mode: Mode, shape: BedrockShape): Promise<RawAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'accept-encoding': 'gzip, br, zstd',
    authorization: `Bearer ${mode === 'stored' ? proxy.account.token : BEDROCK_KEY}`,
    ...(mode === 'pass-through' ? { 'x-proxy-token': proxy.account.token } : {}),
  };
  const body = OPERATION[shape].startsWith('invoke')
    ? {
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 64,
        messages: [{ role: 'user', content: `encodings ${mode} ${shape}` }],
      }
    : { messages: [{ role: 'user', content: [{ text: `encodings ${mode} ${shape}` }] }] };
  return new Promise((resolve, reject) => {
    const req = request(
      `${proxy.proxyBase}/bedrock/model/${BEDROCK_MODEL}/${OPERATION[shape]}`,
      { method: 'POST', headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (part: Buffer) => chunks.push(part));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks),
            requestId: String(res.headers['x-proxy-request-id']),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const bedrockCases = (['stored', 'pass-through'] as const).flatMap((mode) =>
  Object.keys(CODINGS).flatMap((coding) => BEDROCK_SHAPES.map((shape) => [mode, coding, shape] as const)),
);

test.each(bedrockCases)(
  'bedrock, %s mode, %s, %s: identity bytes, whole frames, every credential redacted',
  async (mode, coding, shape) => {
    const status = shape === '403 json' ? 403 : 200;
    const stream = shape.includes('stream');
    let received: string[] = [];
    upstream.next({
      status,
      contentType: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
      headers: {
        'content-encoding': coding,
        ...(status === 403
          ? { 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/' }
          : {}),
      },
      async body(write, req) {
        received = bedrockReceived(req);
        await writeInThirds(CODINGS[coding]!(bedrockBody(shape, req)), write);
      },
    });
    const answer = await bedrockCall(mode, shape);
    expect(upstream.requests.at(-1)!.headers['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(answer.status).toBe(status);
    expect(answer.headers['content-encoding']).toBeUndefined();
    const secrets = [
      ...received,
      proxy.account.token,
      tokenSecret(proxy.account.token),
      proxy.fakes.bedrock.secrets.secretAccessKey,
    ];
    expect(received).toHaveLength(mode === 'stored' ? 3 : 1);
    const text = stream ? eventStreamText(answer.body) : answer.body.toString('utf8');
    expect(present(text + answer.body.toString('latin1'), secrets)).toEqual([]);
    expect(text.split('[redacted]').length - 1).toBe(received.length + 2);
    const [row] = await proxy.rowsFor(proxy.account.token, [answer.requestId]);
    expect(row).toMatchObject({ provider: 'bedrock', status_code: status });
    expect(present(JSON.stringify(row), secrets)).toEqual([]);
    if (status === 403) expect(String(row!.error)).toContain('[redacted]');
    else expect(row).toMatchObject({ input_tokens: 5, output_tokens: 3 });
  },
);

test('a Bedrock event stream that stops being frames is cut there: what follows a bad CRC is not passed on, and the stream ends with the proxy’s exception frame', async () => {
  upstream.next({
    status: 200,
    contentType: 'application/vnd.amazon.eventstream',
    headers: { 'content-encoding': 'gzip' },
    async body(write, req) {
      const frames = [
        frame('messageStart', { role: 'assistant' }),
        chunk({ text: `quoting ${bedrockReceived(req).join(' ')}` }),
        frame('metadata', { usage: { inputTokens: 1, outputTokens: 1 } }),
      ];
      // The second frame's CRC no longer matches: its base64 could hide a credential the proxy can't see.
      frames[1]![frames[1]!.length - 1]! ^= 0xff;
      await write(gzipSync(Buffer.concat(frames)));
    },
  });
  const answer = await bedrockCall('stored', '200 converse stream');
  expect(answer.status).toBe(200);
  const decoder = new EventStreamDecoder();
  const messages = decoder.push(answer.body);
  expect(decoder.problem).toBeUndefined();
  expect(messages.map((m) => m.eventType ?? m.exceptionType)).toEqual(['messageStart', 'internalServerException']);
  expect(messages[1]!.payload.toString()).toMatch(/could not be read/);
  const [row] = await proxy.rowsFor(proxy.account.token, [answer.requestId]);
  expect(String(row!.error)).toMatch(/could not be read/);
});
