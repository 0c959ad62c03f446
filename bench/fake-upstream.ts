/**
 * The benchmark's upstream: one loopback HTTP server that answers both dialects
 * (chat completions at /v1/chat/completions, messages at /v1/messages), as JSON
 * or SSE, with realistic usage fields. It is leaner than test/fakes (no fixtures,
 * no scripting) and stamps every SSE event with the monotonic time it was
 * written (`fp_<ns>` / `@<ns>`), so the load generator can measure how long each
 * event spent inside a proxy. process.hrtime is CLOCK_MONOTONIC, shared by all
 * processes on the machine.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamShape {
  /** Wait before the status line. */
  latencyMs: number;
  /** Content events in a stream (and words in a JSON answer). */
  chunks: number;
  /** Gap between stream events. */
  chunkIntervalMs: number;
}

export interface BenchUpstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Requests answered so far. */
  readonly served: number;
  /** Monotonic arrival times (ms) of the requests since `startRecording()`. */
  readonly arrivals: readonly number[];
  startRecording(): void;
  stopRecording(): void;
  setShape(shape: UpstreamShape): void;
  close(): Promise<void>;
}

const nowNs = () => process.hrtime.bigint().toString();
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

const USAGE = { input: 412, output: 187, cachedInput: 128 };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function chatJson(model: string, words: number): string {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(words).trim(), refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: USAGE.input,
      completion_tokens: USAGE.output,
      total_tokens: USAGE.input + USAGE.output,
      prompt_tokens_details: { cached_tokens: USAGE.cachedInput, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_bench',
  });
}

function messagesJson(model: string, words: number): string {
  return JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'word '.repeat(words).trim() }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: USAGE.input, output_tokens: USAGE.output, cache_creation_input_tokens: 0, cache_read_input_tokens: USAGE.cachedInput },
  });
}

/** The events of one chat stream; each is rendered when it is written, so its stamp is the write time. */
function chatEvents(model: string, chunks: number, includeUsage: boolean): Array<() => string> {
  const chunk = (delta: object, finish: string | null) => () =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: `fp_${nowNs()}`, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
  for (let i = 0; i < chunks; i++) events.push(chunk({ content: 'word ' }, null));
  events.push(chunk({}, 'stop'));
  if (includeUsage) {
    const usage = { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output, prompt_tokens_details: { cached_tokens: USAGE.cachedInput } };
    events.push(() => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: `fp_${nowNs()}`, choices: [], usage })}\n\n`);
  }
  events.push(() => 'data: [DONE]\n\n');
  return events;
}

function messagesEvents(model: string, chunks: number): Array<() => string> {
  const event = (type: string, data: () => object) => () => `event: ${type}\ndata: ${JSON.stringify({ type, ...data() })}\n\n`;
  const usage = { input_tokens: USAGE.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: USAGE.cachedInput };
  const events = [
    event('message_start', () => ({ message: { id: `msg_@${nowNs()}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } })),
    event('content_block_start', () => ({ index: 0, content_block: { type: 'text', text: `@${nowNs()} ` } })),
  ];
  for (let i = 0; i < chunks; i++) events.push(event('content_block_delta', () => ({ index: 0, delta: { type: 'text_delta', text: `@${nowNs()} ` } })));
  events.push(event('content_block_stop', () => ({ index: 0 })));
  events.push(event('message_delta', () => ({ delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.output } })));
  events.push(event('message_stop', () => ({})));
  return events;
}

/** A Responses API stream: stamped text deltas, usage on `response.completed`. */
function responsesEvents(model: string, chunks: number): Array<() => string> {
  let sequence = 0;
  const event = (type: string, data: () => object) => () => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data() })}\n\n`;
  const response = (status: string, usage: object | null) => ({ id: 'resp_bench', object: 'response', created_at: 1_700_000_000, status, model, output: [], usage });
  const item = { id: 'msg_bench', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  const at = { item_id: 'msg_bench', output_index: 0, content_index: 0 };
  const events = [
    event('response.created', () => response('in_progress', null)),
    event('response.in_progress', () => response('in_progress', null)),
    event('response.output_item.added', () => ({ output_index: 0, item })),
    event('response.content_part.added', () => ({ ...at, part: { type: 'output_text', text: '', annotations: [] } })),
  ];
  for (let i = 0; i < chunks; i++) events.push(event('response.output_text.delta', () => ({ ...at, delta: `@${nowNs()} `, logprobs: [] })));
  const usage = { input_tokens: USAGE.input, input_tokens_details: { cached_tokens: USAGE.cachedInput }, output_tokens: USAGE.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE.input + USAGE.output };
  events.push(event('response.output_item.done', () => ({ output_index: 0, item: { ...item, status: 'completed' } })));
  events.push(event('response.completed', () => ({ response: response('completed', usage) })));
  return events;
}

export async function startBenchUpstream(initial: UpstreamShape): Promise<BenchUpstream> {
  let shape = initial;
  let served = 0;
  let arrivals: number[] | undefined;

  async function answer(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    arrivals?.push(monotonicMs());
    const path = req.url?.split('?')[0];
    const messages = path === '/v1/messages';
    const responses = path === '/v1/responses';
    if (req.method !== 'POST' || (!messages && !responses && path !== '/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
      return;
    }
    let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } } = {};
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      // An unparsable body still gets an answer: the benchmark only cares about timing.
    }
    const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini';
    const { latencyMs, chunks, chunkIntervalMs } = shape;
    if (latencyMs > 0) await sleep(latencyMs);
    served++;
    if (body.stream !== true) {
      const text = messages ? messagesJson(model, chunks) : chatJson(model, chunks);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-request-id': 'req_bench' });
      res.end(text);
      return;
    }
    const events = responses ? responsesEvents(model, chunks) : messages ? messagesEvents(model, chunks) : chatEvents(model, chunks, body.stream_options?.include_usage === true);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': 'req_bench' });
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && chunkIntervalMs > 0) await sleep(chunkIntervalMs);
      if (res.destroyed) return;
      res.write(events[i]!());
    }
    res.end();
  }

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      answer(req, res, Buffer.concat(parts)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    get served() {
      return served;
    },
    get arrivals() {
      return arrivals ?? [];
    },
    startRecording: () => void (arrivals = []),
    stopRecording: () => void (arrivals = undefined),
    setShape: (next) => void (shape = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
