import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * A provider that compresses its answer (the proxy asks for the codings it can
 * decode): the body is decoded, redacted and sent to the client as identity,
 * without the encoding header, and the row is exact; where the proxy edits the
 * stream (hiding the usage event it asked for), it edits the decoded events.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

type Coding = 'gzip' | 'deflate' | 'deflate-raw' | 'br';
const CODINGS: Coding[] = ['gzip', 'deflate', 'deflate-raw', 'br'];
const DECODE: Record<Coding, (body: Buffer) => Buffer> = {
  gzip: gunzipSync,
  deflate: inflateSync,
  'deflate-raw': inflateRawSync,
  br: brotliDecompressSync,
};

const MODELS: Partial<Record<ProviderId, string>> = {
  'prov-a': 'claude-haiku-4-5',
  'prov-b': 'gpt-4o-mini',
  'prov-c': 'gemini-2.5-flash',
  'prov-d': 'mistral-small-latest',
};

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  requestId: string;
}

/** A plain HTTP call that keeps the body as bytes (fetch would decode it). */
function rawCall(provider: ProviderId, stream: boolean, content = 'Say hello.'): Promise<RawAnswer> {
  const path = provider === 'prov-a' ? '/v1/messages' : `/${provider}/v1/chat/completions`;
  const body = JSON.stringify({
    model: MODELS[provider],
    max_tokens: 50,
    messages: [{ role: 'user', content }],
    stream,
  });
  const credential =
    provider === 'prov-a' ? { 'x-api-key': proxy.account.token } : { authorization: `Bearer ${proxy.account.token}` };
  return new Promise((resolve, reject) => {
    const req = request(
      `${proxy.proxyBase}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...credential } },
      (res) => {
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
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A non-streaming call whose answer may break off after its headers: what arrived, and the request id. */
function cutCall(provider: ProviderId): Promise<{ requestId: string; body: string }> {
  const body = JSON.stringify({
    model: MODELS[provider],
    max_tokens: 50,
    messages: [{ role: 'user', content: 'cut' }],
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${proxy.proxyBase}/v1/messages`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': proxy.account.token } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', () => undefined);
        res.on('close', () =>
          resolve({
            requestId: String(res.headers['x-proxy-request-id']),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const usage = { inputTokens: 1234, outputTokens: 321, cacheReadTokens: 0, cacheWriteTokens: 0 };
const lastRequest = (provider: ProviderId) => proxy.fakes.fakes[provider].requests.at(-1)!;
const rowOf = async (requestId: string) => (await proxy.rowsFor(proxy.account.token, [requestId]))[0];

/** The same request answered uncompressed: the row every compressed answer must match. */
async function identityRow(provider: ProviderId, stream: boolean) {
  proxy.fakes.fakes[provider].next({ usage });
  const answer = await rawCall(provider, stream);
  return rowOf(answer.requestId);
}

const rowFields = (row: Record<string, unknown>) => ({
  model: row.model,
  input_tokens: row.input_tokens,
  output_tokens: row.output_tokens,
  cost_nanos: row.cost_nanos,
  priced: row.priced,
  error: row.error,
  status_code: row.status_code,
});

describe.each(CODINGS)('an upstream answering with %s', (coding) => {
  describe.each([
    ['prov-a', false],
    ['prov-a', true],
    ['prov-b', false],
    ['prov-d', false],
    ['prov-d', true],
  ] as const)('%s (stream: %s), decoded', (provider, stream) => {
    it('the client gets the decoded bytes as identity; the row is exact', async () => {
      const expected = await identityRow(provider, stream);
      expect(expected.input_tokens).toBe(usage.inputTokens);
      proxy.fakes.fakes[provider].next({ usage, contentEncoding: coding, ...(stream ? { chunkIntervalMs: 1 } : {}) });
      const answer = await rawCall(provider, stream);
      const sent = lastRequest(provider).response.encodedBody!;
      expect(answer.status).toBe(200);
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(answer.body.equals(DECODE[coding](sent))).toBe(true);
      const row = await rowOf(answer.requestId);
      expect(rowFields(row)).toEqual(rowFields(expected));
      expect(row.cost_nanos).toBeGreaterThan(0);
    });
  });

  describe.each(['prov-b', 'prov-c'] as const)(
    '%s stream, where the proxy takes out the usage it asked for',
    (provider) => {
      it('is decoded, filtered and sent as identity without the encoding header; the row is exact', async () => {
        const expected = await identityRow(provider, true);
        proxy.fakes.fakes[provider].next({ usage, contentEncoding: coding, chunkIntervalMs: 1 });
        const answer = await rawCall(provider, true);
        expect(answer.status).toBe(200);
        expect(answer.headers['content-encoding']).toBeUndefined();
        const upstreamText = DECODE[coding](lastRequest(provider).response.encodedBody!).toString('utf8');
        // What the provider sends unasked: no usage-only event, no `usage` member on the other chunks
        // (the fake writes each chunk as JSON.stringify does, so a round trip keeps every other byte).
        const withoutAddedUsage = upstreamText
          .split('\n\n')
          .filter((event) => !/"choices":\[\],"usage":\{/.test(event))
          .map((event) => {
            if (!event.startsWith('data: {')) return event;
            const { usage: _usage, ...chunk } = JSON.parse(event.slice(6)) as Record<string, unknown>;
            return `data: ${JSON.stringify(chunk)}`;
          })
          .join('\n\n');
        expect(upstreamText).toContain('"usage"');
        expect(answer.body.toString('utf8')).toBe(withoutAddedUsage);
        expect(answer.body.toString('utf8')).toContain('data: [DONE]');
        expect(rowFields(await rowOf(answer.requestId))).toEqual(rowFields(expected));
      });
    },
  );
});

describe('compressed answers through the official SDKs', () => {
  it('OpenAI SDK, gzip stream on the filtered path: readable events, exact row', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-b'].next({ usage, contentEncoding: 'gzip', chunkIntervalMs: 1 });
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    let text = '';
    const chunks: unknown[] = [];
    for await (const chunk of data) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
    // The client did not ask for usage, so it never sees the usage-only chunk.
    expect(chunks.every((chunk) => (chunk as { choices: unknown[] }).choices.length > 0)).toBe(true);
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, status_code: 200 });
    expect(row.error).toBeUndefined();
  });

  it('Anthropic SDK, br JSON and gzip stream', async () => {
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-a'].next({ usage, contentEncoding: 'br' });
    const { data, response } = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.usage.input_tokens).toBe(usage.inputTokens);
    expect(await rowOf(response.headers.get('x-proxy-request-id')!)).toMatchObject({
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
    });

    proxy.fakes.fakes['prov-a'].next({ usage, contentEncoding: 'gzip', chunkIntervalMs: 1 });
    const streamed = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    let stops = 0;
    for await (const event of streamed.data) if (event.type === 'message_stop') stops++;
    expect(stops).toBe(1);
    expect(await rowOf(streamed.response.headers.get('x-proxy-request-id')!)).toMatchObject({
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
    });
  });
});

describe('a compressed error answer', () => {
  it('is decoded, cleaned of credentials and sent as identity', async () => {
    const storedKey = proxy.storedKeys['prov-b'];
    proxy.fakes.fakes['prov-b'].next({
      status: 401,
      errorBody: { error: { message: `Incorrect API key provided: ${storedKey}.`, type: 'invalid_request_error' } },
      contentEncoding: 'gzip',
    });
    const answer = await rawCall('prov-b', false);
    expect(answer.status).toBe(401);
    expect(answer.headers['content-encoding']).toBeUndefined();
    const text = answer.body.toString('utf8');
    expect(text).not.toContain(storedKey);
    expect(JSON.parse(text).error.message).toBe('Incorrect API key provided: [redacted].');
    expect((await rowOf(answer.requestId)).error).toBe('Incorrect API key provided: [redacted].');
  });
});

describe('a compressed answer stored in the cache', () => {
  it('is stored decoded and served as identity to the next identical request', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-d/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-d'].next({ usage, contentEncoding: 'gzip' });
    const first = await client.chat.completions
      .create(
        { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'compressed cache entry' }] },
        { headers: { 'x-proxy-cache': 'refresh' } },
      )
      .withResponse();
    expect(first.response.headers.get('x-proxy-cache')).toBe('REFRESH');
    const hit = await client.chat.completions
      .create(
        { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'compressed cache entry' }] },
        { headers: { 'x-proxy-cache': 'true' } },
      )
      .withResponse();
    expect(hit.response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(hit.response.headers.get('content-encoding')).toBeNull();
    expect(hit.data).toEqual(first.data);
    expect(hit.data.usage?.prompt_tokens).toBe(usage.inputTokens);
  });
});

describe('bodies the proxy cannot decode', () => {
  it('a coding this runtime does not have: nothing passed on, a 502 that says why', async () => {
    proxy.fakes.fakes['prov-d'].next({ usage, headers: { 'content-encoding': 'compress' } });
    const answer = await rawCall('prov-d', false);
    expect(answer.status).toBe(502);
    expect(answer.headers['content-encoding']).toBeUndefined();
    const row = await rowOf(answer.requestId);
    expect(row.input_tokens).toBe(0);
    expect(row.error).toMatch(/content-encoding "compress", which the proxy cannot decode/);
  });

  it('a JSON body that is not what its encoding header says: the answer is cut, the row says so', async () => {
    proxy.fakes.fakes['prov-a'].next({ usage, headers: { 'content-encoding': 'gzip' } });
    const answer = await cutCall('prov-a');
    expect(answer.body).not.toContain('"usage"');
    const row = await rowOf(answer.requestId);
    expect(row.error).toMatch(/could not decode the upstream body/);
  });

  it('on the filtered path, a corrupt compressed stream ends with an error event in the stream', async () => {
    proxy.fakes.fakes['prov-b'].next({ usage, headers: { 'content-encoding': 'gzip' } });
    const answer = await rawCall('prov-b', true);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.body.toString('utf8')).toMatch(/^data: \{"error":\{"message":"could not decode the upstream body/);
    const row = await rowOf(answer.requestId);
    expect(row.error).toMatch(/could not decode the upstream body/);
  });
});
