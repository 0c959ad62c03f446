/**
 * A compressed answer is redacted like a plain one (SECURITY.md, "Keys"):
 * every provider, stored and pass-through mode, every coding the proxy
 * asks for and two stacked, a 200 JSON body, a 200 stream and a 401 error body, each
 * quoting the credential the provider received, the proxy token and its secret part.
 * The client gets identity bytes without `content-encoding`; a coding the proxy cannot
 * decode is never passed on. Bedrock's event streams: redaction-encodings-bedrock.test.ts.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { ProviderId } from '../fakes/start-fakes';
import { credentialHeaders, ENDPOINT, PROVIDERS, requestBody } from '../reliability/support/requests';
import {
  startScriptedUpstream,
  type ScriptedRequest,
  type ScriptedUpstream,
} from '../reliability/support/scripted-upstream';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { tokenSecret } from './support/observed';
import { CODINGS, present, writeInThirds, type Mode, type RawAnswer } from './support/encodings';

const ownKey = (provider: ProviderId) =>
  `${provider}-own-key-${createHash('sha256').update(`enc-${provider}`).digest('hex').slice(0, 24)}`;

type Shape = '200 json' | '200 stream' | '401 json';
const SHAPES: Shape[] = ['200 json', '200 stream', '401 json'];

let upstream: ScriptedUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  const env: Record<string, string> = {};
  for (const provider of PROVIDERS) env[`UPSTREAM_BASE_URL_${provider.toUpperCase().replace('-', '_')}`] = upstream.url;
  proxy = await startProxy({ env: { ...env, UPSTREAM_BASE_URL_BEDROCK: upstream.url, RATE_LIMIT_PER_MINUTE: '1000' } });
  for (const provider of PROVIDERS) proxy.secrets.add(ownKey(provider));
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

/** The credential as the provider received it (its own header, without the scheme). */
const receivedKey = (request: ScriptedRequest) =>
  String(request.headers['x-api-key'] ?? request.headers.authorization ?? '').replace(/^Bearer /, '');

/** The text a careless provider would send in this shape, quoting every credential of the request. */
function bodyText(provider: ProviderId, shape: Shape, request: ScriptedRequest): string {
  const quote = `key ${receivedKey(request)}, token ${proxy.account.token}, secret ${tokenSecret(proxy.account.token)}`;
  const messages = provider === 'prov-a';
  if (shape === '401 json') {
    return JSON.stringify(
      messages
        ? { type: 'error', error: { type: 'authentication_error', message: `bad ${quote}` } }
        : { error: { message: `bad ${quote}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
    );
  }
  if (shape === '200 json') {
    return JSON.stringify(
      messages
        ? {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-6',
            content: [{ type: 'text', text: quote }],
            stop_reason: 'end_turn',
            usage: { input_tokens: 5, output_tokens: 3 },
          }
        : {
            id: 'c1',
            object: 'chat.completion',
            created: 1,
            model: 'model-x',
            choices: [{ index: 0, message: { role: 'assistant', content: quote }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
          },
    );
  }
  if (messages) {
    const start = {
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
    };
    const delta = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: quote } };
    return `event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: content_block_delta\ndata: ${JSON.stringify(delta)}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
  }
  const chunk = {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'model-x',
    choices: [{ index: 0, delta: { role: 'assistant', content: quote }, finish_reason: null }],
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}

/** A plain HTTP call that keeps the body as bytes and asks for compression, as a browser would. */
function rawCall(provider: ProviderId, mode: Mode, stream: boolean): Promise<RawAnswer> {
  const headers = {
    'content-type': 'application/json',
    'accept-encoding': 'gzip, br, zstd',
    ...credentialHeaders(provider, proxy.account.token, mode === 'pass-through' ? ownKey(provider) : undefined),
  };
  return new Promise((resolve, reject) => {
    const req = request(proxy.proxyBase + ENDPOINT[provider], { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: Buffer.concat(chunks),
          requestId: String(res.headers['x-proxy-request-id']),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(requestBody(provider, `encodings ${provider} ${mode} ${stream}`, stream)));
  });
}

const secretsFor = (provider: ProviderId, mode: Mode) => [
  mode === 'stored' ? proxy.storedKeys[provider] : ownKey(provider),
  proxy.account.token,
  tokenSecret(proxy.account.token),
];

const cases = PROVIDERS.flatMap((provider) =>
  (['stored', 'pass-through'] as const).flatMap((mode) =>
    Object.keys(CODINGS).flatMap((coding) => SHAPES.map((shape) => [provider, mode, coding, shape] as const)),
  ),
);

test.each(cases)(
  '%s, %s mode, %s, %s: identity bytes, every credential redacted',
  async (provider, mode, coding, shape) => {
    const status = shape === '401 json' ? 401 : 200;
    upstream.next({
      status,
      contentType: shape === '200 stream' ? 'text/event-stream' : 'application/json',
      headers: { 'content-encoding': coding },
      async body(write, req) {
        await writeInThirds(CODINGS[coding]!(Buffer.from(bodyText(provider, shape, req), 'utf8')), write);
      },
    });
    const answer = await rawCall(provider, mode, shape === '200 stream');
    expect(upstream.requests.at(-1)!.headers['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(answer.status).toBe(status);
    expect(answer.headers['content-encoding']).toBeUndefined();
    const text = answer.body.toString('utf8');
    expect(present(text, secretsFor(provider, mode))).toEqual([]);
    expect(text.split('[redacted]').length - 1).toBe(3);
    if (shape === '401 json') {
      const [row] = await proxy.rowsFor(proxy.account.token, [answer.requestId]);
      expect(row!.status_code).toBe(401);
      expect(String(row!.error)).toContain('[redacted]');
      expect(present(String(row!.error), secretsFor(provider, mode))).toEqual([]);
    }
  },
);

test('a coding the proxy cannot decode is not passed on: 502 in the endpoint shape, and the row says why', async () => {
  upstream.next({
    status: 200,
    contentType: 'application/json',
    headers: { 'content-encoding': 'gzip, compress' },
    async body(write) {
      await write(Buffer.from('opaque bytes that could quote a key'));
    },
  });
  const answer = await rawCall('prov-b', 'stored', false);
  expect(answer.status).toBe(502);
  const text = answer.body.toString('utf8');
  expect(text).not.toContain('opaque bytes');
  expect(JSON.parse(text).error.message).toMatch(/content-encoding "compress", which the proxy cannot decode/);
  const [row] = await proxy.rowsFor(proxy.account.token, [answer.requestId]);
  expect(row).toMatchObject({ status_code: 502 });
  expect(String(row!.error)).toMatch(/cannot decode/);
});
