/**
 * The benchmark's provider: a loopback server that answers chat completions the way the provider
 * does (the shapes of test/fixtures/prov-b/text.json and text.sse), after a fixed first-byte delay.
 * Every SSE event carries, in its `obfuscation` field (padding of varying length in the real
 * stream), the monotonic time at which it was written, so a client on this machine can tell how
 * long the event spent between the provider and itself.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamShape {
  /** From the whole request received to the status line (and, for JSON, the whole body). */
  firstByteMs: number;
  /** Content events of a stream; the JSON answer holds as many words. */
  events: number;
  /** Between two stream events. */
  eventGapMs: number;
}

export interface Upstream {
  origin: string;
  readonly served: number;
  close(): Promise<void>;
}

const USAGE = { prompt_tokens: 412, completion_tokens: 187, cached_tokens: 128 };
const WORDS = [
  'Caching',
  ' is',
  ' opt',
  '-in',
  ':',
  ' a',
  ' request',
  ' asks',
  ' for',
  ' it',
  ' with',
  ' a',
  ' header',
  ',',
  ' and',
  ' the',
  ' answer',
  ' is',
  ' kept',
  ' for',
  ' its',
  ' time',
  '.',
];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const stamp = () => process.hrtime.bigint().toString();
const text = (count: number) => Array.from({ length: count }, (_, i) => WORDS[i % WORDS.length]).join('');

function usage() {
  return {
    prompt_tokens: USAGE.prompt_tokens,
    completion_tokens: USAGE.completion_tokens,
    total_tokens: USAGE.prompt_tokens + USAGE.completion_tokens,
    prompt_tokens_details: { cached_tokens: USAGE.cached_tokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function jsonAnswer(model: string, words: number): string {
  return JSON.stringify({
    id: 'chatcmpl-BnCh7Qw2Ls9Vn4Tb6Jd1Hc8Zm3',
    object: 'chat.completion',
    created: 1_771_002_417,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text(words), refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usage(),
    service_tier: 'default',
    system_fingerprint: 'fp_3c1a6e0b5d',
  });
}

/** The events of one stream, each rendered when written (its stamp is its write time). */
function streamEvents(model: string, count: number, includeUsage: boolean): Array<() => string> {
  const chunk =
    (delta: object, finish: string | null, extra: object = { usage: null }) =>
    () =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-BnCh7Qw2Ls9Vn4Tb6Jd1Hc8Zm3',
        object: 'chat.completion.chunk',
        created: 1_771_002_417,
        model,
        service_tier: 'default',
        system_fingerprint: 'fp_3c1a6e0b5d',
        choices: finish === 'usage' ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...extra,
        obfuscation: `t${stamp()}`,
      })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
  for (let i = 0; i < count; i++) events.push(chunk({ content: WORDS[i % WORDS.length] }, null));
  events.push(chunk({}, 'stop'));
  if (includeUsage) events.push(chunk({}, 'usage', { usage: usage() }));
  events.push(() => 'data: [DONE]\n\n');
  return events;
}

export async function startUpstream(shape: UpstreamShape): Promise<Upstream> {
  let served = 0;
  async function answer(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"message":"Unknown request URL","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    const body = JSON.parse(raw.toString('utf8') || '{}') as {
      model?: string;
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
    };
    const model = body.model === 'gpt-4o-mini' ? 'gpt-4o-mini-2024-07-18' : (body.model ?? 'gpt-4o-mini-2024-07-18');
    await sleep(shape.firstByteMs);
    served++;
    const headers = {
      'x-request-id': `req_${served.toString(16).padStart(24, '0')}`,
      'openai-processing-ms': String(shape.firstByteMs),
      'openai-version': '2020-10-01',
    };
    if (body.stream !== true) {
      const answerText = jsonAnswer(model, shape.events);
      res
        .writeHead(200, {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answerText),
        })
        .end(answerText);
      return;
    }
    const events = streamEvents(model, shape.events, body.stream_options?.include_usage === true);
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (let i = 0; i < events.length; i++) {
      if (i > 0) await sleep(shape.eventGapMs);
      if (res.destroyed) return;
      res.write(events[i]!());
    }
    res.end();
  }
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => void answer(req, res, Buffer.concat(parts)).catch(() => res.destroy()));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get served() {
      return served;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
