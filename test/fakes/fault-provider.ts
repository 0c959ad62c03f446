/**
 * A fake OpenAI-compatible provider that misbehaves on purpose, for the failover crash test
 * (test/reliability/failover-crash-test.test.ts): the model name picks the fault, after the
 * public failover crash test's catalogue (failoverbench, scenarios/catalogue.yaml, methodology
 * v0.1). `fb-ok` always answers; `fb-ok-noprefill` answers unless the last message is an
 * assistant prefill. Every request is logged (time, model, attempt, what was done), per run:
 * the `x-fb-run` request header keeps two runs' logs and attempt counts apart.
 *
 * Raw enough to produce the faults of the wild: a TCP reset before any byte, a chunked body
 * that never sends its last chunk, a stream that goes silent with the socket open.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Every healthy answer is this text, sixty words (the client's content is compared with it). */
export const CANONICAL_ANSWER =
  'A gateway earns trust on the bad days: when the provider throttles, resets, stalls or cuts a stream, ' +
  'the caller should still receive one complete answer, billed once, from a model it allowed, with every ' +
  'attempt written down. Anything less moves the failure somewhere harder to see, and a failure nobody ' +
  'sees is the one that costs the most to find later.';
const WORDS = CANONICAL_ANSWER.split(' ');

export interface FaultTimings {
  retryAfterS: number;
  slowFirstTokenS: number;
  stallS: number;
  noResponseS: number;
  flapDownS: number;
  tokenIntervalMs: number;
  cutAfterTokens: number;
  stallAfterTokens: number;
  malformedAtToken: number;
}

/** The catalogue's published timings (`full`) and its local shortcut (`fast`). */
export const FAULT_PROFILES: Record<'full' | 'fast', FaultTimings> = {
  full: {
    retryAfterS: 2,
    slowFirstTokenS: 20,
    stallS: 30,
    noResponseS: 120,
    flapDownS: 60,
    tokenIntervalMs: 15,
    cutAfterTokens: 40,
    stallAfterTokens: 20,
    malformedAtToken: 10,
  },
  fast: {
    retryAfterS: 2,
    slowFirstTokenS: 3,
    stallS: 4,
    noResponseS: 15,
    flapDownS: 6,
    tokenIntervalMs: 5,
    cutAfterTokens: 40,
    stallAfterTokens: 20,
    malformedAtToken: 10,
  },
};

export interface AttemptSeen {
  /** Seconds since the run's reset. */
  t: number;
  model: string;
  attempt: number;
  action: string;
  lastRole?: string;
  /** Seconds after which the proxy hung up on a request held in silence. */
  clientLeftAfter?: number;
}

type Fault =
  | 'ok'
  | 'ok-noprefill'
  | '429-retry-after-once'
  | '429-persistent'
  | '500-once'
  | '503-persistent'
  | 'reset-once'
  | 'no-response'
  | 'slow-first-token'
  | 'stream-cut'
  | 'stream-stall'
  | 'malformed-chunk'
  | 'no-done'
  | 'context-length'
  | 'content-filter'
  | 'flap';

const FAULTS: Record<string, Fault> = {
  ok: 'ok',
  'ok-noprefill': 'ok-noprefill',
  s01: '429-retry-after-once',
  s02: '429-persistent',
  s03: '500-once',
  s04: '503-persistent',
  s05: 'reset-once',
  s06: 'no-response',
  s07: 'slow-first-token',
  s08: 'stream-cut',
  s09: 'stream-stall',
  s10: 'malformed-chunk',
  s11: 'no-done',
  s12: 'context-length',
  s13: 'content-filter',
  s14: 'stream-cut',
  s15: 'flap',
  s16: '503-persistent',
};

function faultOf(model: string): Fault | undefined {
  const name = model.split('/').pop()!.toLowerCase();
  if (!name.startsWith('fb-')) return undefined;
  const rest = name.slice(3);
  return FAULTS[rest] ?? FAULTS[rest.split('-')[0]];
}

interface Run {
  startedAt: number;
  log: AttemptSeen[];
  counts: Map<string, number>;
}

export interface FaultProvider {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  timings: FaultTimings;
  /** Starts a run afresh: its log, attempt counts and clock (the flap's outage runs from here). */
  reset(run: string): void;
  log(run: string): AttemptSeen[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFaultProvider(timings: FaultTimings): Promise<FaultProvider> {
  const runs = new Map<string, Run>();
  const runOf = (name: string) => {
    if (!runs.has(name)) runs.set(name, { startedAt: performance.now(), log: [], counts: new Map() });
    return runs.get(name)!;
  };
  const sockets = new Set<Socket>();

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void answer(request, response, Buffer.concat(chunks)).catch(() => response.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function answer(request: IncomingMessage, response: ServerResponse, raw: Buffer) {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions'))
      return sendError(response, 404, 'No such route', 'invalid_request_error', null);
    const body = JSON.parse(raw.toString('utf8')) as {
      model?: string;
      stream?: boolean;
      messages?: Array<{ role: string; content: string }>;
      stream_options?: { include_usage?: boolean };
    };
    const model = String(body.model ?? '');
    const run = runOf(String(request.headers['x-fb-run'] ?? 'default'));
    const attempt = (run.counts.get(model) ?? 0) + 1;
    run.counts.set(model, attempt);
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1];
    const seen: AttemptSeen = {
      t: (performance.now() - run.startedAt) / 1000,
      model,
      attempt,
      action: '',
      lastRole: last?.role,
    };
    run.log.push(seen);
    const fault = faultOf(model);
    if (!fault) {
      seen.action = '404 model_not_found';
      return sendError(response, 404, `The model ${model} does not exist`, 'invalid_request_error', 'model_not_found');
    }

    // An assistant message last whose text starts the canonical answer gets the rest of it (a prefill).
    let words = WORDS;
    let continuation = false;
    if (last?.role === 'assistant') {
      if (fault === 'ok-noprefill') {
        seen.action = '400 prefill_rejected';
        return sendError(
          response,
          400,
          'This model does not support assistant message prefill.',
          'invalid_request_error',
          'invalid_prefill',
        );
      }
      const prefix = String(last.content ?? '').trim();
      if (prefix && CANONICAL_ANSWER.startsWith(prefix)) {
        words = CANONICAL_ANSWER.slice(prefix.length).split(' ').filter(Boolean);
        continuation = true;
      }
    }
    const promptTokens = messages.reduce((sum, m) => sum + String(m.content ?? '').split(/\s+/).length + 4, 0);
    const since = () => (performance.now() - run.startedAt) / 1000;

    switch (fault) {
      case '429-retry-after-once':
        if (attempt === 1) {
          seen.action = `429 retry-after=${timings.retryAfterS}`;
          return sendError(response, 429, 'Rate limit reached.', 'rate_limit_error', 'rate_limit_exceeded', {
            'retry-after': String(timings.retryAfterS),
          });
        }
        break;
      case '429-persistent':
        seen.action = '429';
        return sendError(response, 429, 'Rate limit reached.', 'rate_limit_error', 'rate_limit_exceeded');
      case '500-once':
        if (attempt === 1) {
          seen.action = '500';
          return sendError(response, 500, 'The server had an error.', 'server_error', null);
        }
        break;
      case '503-persistent':
        seen.action = '503';
        return sendError(response, 503, 'The engine is currently overloaded.', 'server_error', 'overloaded');
      case 'reset-once':
        if (attempt === 1) {
          seen.action = 'tcp-reset';
          request.socket.resetAndDestroy();
          return;
        }
        break;
      case 'no-response': {
        seen.action = `no-response ${timings.noResponseS}s`;
        const heldFrom = performance.now();
        const left = new Promise<void>((resolve) => request.socket.once('close', () => resolve()));
        const gone = await Promise.race([left.then(() => true), sleep(timings.noResponseS * 1000).then(() => false)]);
        if (gone) seen.clientLeftAfter = (performance.now() - heldFrom) / 1000;
        request.socket.destroy();
        return;
      }
      case 'context-length':
        seen.action = '400 context_length_exceeded';
        return sendError(
          response,
          400,
          "This model's maximum context length is 8192 tokens.",
          'invalid_request_error',
          'context_length_exceeded',
        );
      case 'content-filter':
        seen.action = '400 content_policy_violation';
        return sendError(
          response,
          400,
          'Your request was rejected by the safety system.',
          'invalid_request_error',
          'content_policy_violation',
        );
      case 'flap':
        if (since() < timings.flapDownS) {
          seen.action = '503 (down window)';
          return sendError(response, 503, 'The engine is currently overloaded.', 'server_error', 'overloaded');
        }
        seen.action = '200 (recovered)';
        break;
      default:
        break;
    }
    if (!body.stream) {
      const text = (continuation ? ' ' : '') + words.join(' ');
      seen.action ||= '200';
      return sendJson(response, 200, completion(model, text, promptTokens, words.length));
    }
    await streamAnswer(response, request.socket, model, words, continuation, fault, body, promptTokens, seen);
  }

  async function streamAnswer(
    response: ServerResponse,
    socket: Socket,
    model: string,
    words: string[],
    continuation: boolean,
    fault: Fault,
    body: { stream_options?: { include_usage?: boolean } },
    promptTokens: number,
    seen: AttemptSeen,
  ) {
    const id = `chatcmpl-fault-${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: object, finish: string | null = null, usage?: object) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    });
    const send = (data: object | string) =>
      response.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    response.flushHeaders();
    if (fault === 'slow-first-token') {
      seen.action = `200 stream, first token after ${timings.slowFirstTokenS}s`;
      await sleep(timings.slowFirstTokenS * 1000);
      if (socket.destroyed) return;
    }
    send(chunk({ role: 'assistant', content: '' }));
    let sent = 0;
    for (let i = 0; i < words.length; i++) {
      if (socket.destroyed) return;
      if (fault === 'stream-cut' && i === timings.cutAfterTokens) {
        seen.action = `200 stream cut after ${i} tokens`;
        // No terminating chunk: the connection just ends.
        socket.destroy();
        return;
      }
      if (fault === 'stream-stall' && i === timings.stallAfterTokens) {
        seen.action = `200 stream stalled after ${i} tokens for ${timings.stallS}s`;
        await sleep(timings.stallS * 1000);
        socket.destroy();
        return;
      }
      if (fault === 'malformed-chunk' && i === timings.malformedAtToken) {
        seen.action = `200 stream with a malformed chunk at token ${i}`;
        send(`{"id": "${id}", "object": "chat.completion.chunk", "choices": [{"delta": {"content": `);
      }
      send(chunk({ content: i > 0 || continuation ? ` ${words[i]}` : words[i] }));
      sent++;
      if (timings.tokenIntervalMs) await sleep(timings.tokenIntervalMs);
    }
    send(chunk({}, 'stop'));
    if (body.stream_options?.include_usage)
      send(
        chunk({}, null, { prompt_tokens: promptTokens, completion_tokens: sent, total_tokens: promptTokens + sent }),
      );
    if (fault === 'no-done') seen.action = '200 stream complete, [DONE] omitted';
    else {
      send('[DONE]');
      seen.action ||= '200 stream';
    }
    response.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    timings,
    reset: (run) => runs.set(run, { startedAt: performance.now(), log: [], counts: new Map() }),
    log: (run) => [...runOf(run).log],
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function completion(model: string, text: string, promptTokens: number, completionTokens: number) {
  return {
    id: `chatcmpl-fault-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

function sendJson(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers: Record<string, string> = {},
) {
  sendJson(response, status, { error: { message, type, param: null, code } }, headers);
}
