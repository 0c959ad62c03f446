/**
 * A Lambda Runtime API on 127.0.0.1, as Lambda's own serves it to the runtime interface client:
 * `GET …/invocation/next` hands out one event at a time with the headers Lambda sends (request id,
 * deadline, function ARN, trace id) and is held open until there is one; `POST …/{id}/response`
 * receives a streamed answer (chunked, with the error trailers) and `POST …/{id}/error` and
 * `POST …/init/error` the failures. The runtime asking for the next event is, as in Lambda, the
 * end of the current invocation: `freeze` is called right then (the instance is frozen between
 * invocations) and `thaw` before the next event is handed out. An invocation still running at its
 * deadline calls `timeUp` (Lambda stops the instance then).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const BASE = '/2018-06-01/runtime';
const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:ai-usage-proxy-function:live';
/** The stack's function timeout (lib/constructs/proxy-function.ts): 15 minutes, Lambda's maximum. */
const FUNCTION_TIMEOUT_MS = 15 * 60_000;

export interface InvokeOptions {
  /** How long the invocation may run (Lambda-Runtime-Deadline-Ms is now plus this); the function's timeout by default. */
  timeoutMs?: number;
  /**
   * The client goes away once this many body bytes have reached it. Lambda does not tell the
   * function (its response stream gets no event and its writes still succeed): the Runtime API
   * goes on reading the stream, which no one receives.
   */
  clientLeavesAfterBodyBytes?: number;
}

export interface Invocation {
  requestId: string;
  /** When the event was handed out (performance.now()), and Lambda's deadline for it (epoch ms). */
  startedAt: number;
  deadline: number;
  /** What the runtime sent on `…/response`: its headers, each chunk as it arrived (ms after `startedAt`), its trailers. */
  response?: {
    headers: IncomingHttpHeaders;
    chunks: Array<{ at: number; bytes: Buffer }>;
    trailers: Record<string, string>;
    complete: boolean;
    /** With `clientLeavesAfterBodyBytes`: when the client went away (ms after `startedAt`). */
    clientLeftAt?: number;
  };
  /** What the runtime sent on `…/error`. */
  error?: { headers: IncomingHttpHeaders; body: string };
  /** When the runtime asked for the next event (ms after `startedAt`, and epoch ms): the invocation was over. */
  endedAt: number;
  endedAtEpoch: number;
}

export interface RuntimeApi {
  /** `host:port`, for AWS_LAMBDA_RUNTIME_API. */
  address: string;
  /** Hands `event` to the runtime; resolves once the runtime asks for the next one (the instance is then frozen). */
  invoke(event: unknown, options?: InvokeOptions): Promise<Invocation>;
  /** Resolves when the runtime first asks for an event: the function's module is loaded (the cold start is over). */
  ready: Promise<void>;
  /** Bodies posted to `…/init/error`. */
  initErrors: string[];
  /** How many times the runtime asked for an event. */
  nextCalls(): number;
  close(): Promise<void>;
}

interface Pending {
  event: unknown;
  options: InvokeOptions;
  done: (invocation: Invocation) => void;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startRuntimeApi(
  hooks: { freeze?: () => void; thaw?: () => void; timeUp?: () => void } = {},
): Promise<RuntimeApi> {
  const queue: Pending[] = [];
  const initErrors: string[] = [];
  let waiting: ServerResponse | undefined;
  let current:
    { pending: Pending; invocation: Omit<Invocation, 'endedAt' | 'endedAtEpoch'>; timer: NodeJS.Timeout } | undefined;
  let frozen = false;
  let nextCalls = 0;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const handOut = () => {
    if (!waiting || current || queue.length === 0) return;
    const pending = queue.shift()!;
    if (frozen) {
      frozen = false;
      hooks.thaw?.();
    }
    const requestId = randomUUID();
    const timeoutMs = pending.options.timeoutMs ?? FUNCTION_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => hooks.timeUp?.(), timeoutMs);
    current = { pending, invocation: { requestId, startedAt: performance.now(), deadline }, timer };
    const res = waiting;
    waiting = undefined;
    res.writeHead(200, {
      'content-type': 'application/json',
      'lambda-runtime-aws-request-id': requestId,
      'lambda-runtime-deadline-ms': String(deadline),
      'lambda-runtime-invoked-function-arn': FUNCTION_ARN,
      'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Parent=${randomUUID().replace(/-/g, '').slice(0, 16)};Sampled=0`,
    });
    res.end(JSON.stringify(pending.event));
  };

  const next = (res: ServerResponse) => {
    nextCalls += 1;
    markReady();
    if (current) {
      // The runtime is done with the invocation: Lambda freezes the instance now.
      frozen = true;
      hooks.freeze?.();
      const { pending, invocation, timer } = current;
      clearTimeout(timer);
      current = undefined;
      pending.done({ ...invocation, endedAt: performance.now() - invocation.startedAt, endedAtEpoch: Date.now() });
    }
    waiting = res;
    handOut();
  };

  const receiveResponse = (req: IncomingMessage, res: ServerResponse) => {
    const invocation = current!.invocation;
    const options = current!.pending.options;
    const response: NonNullable<Invocation['response']> = {
      headers: req.headers,
      chunks: [],
      trailers: {},
      complete: false,
    };
    invocation.response = response;
    let received = Buffer.alloc(0);
    req.on('data', (bytes: Buffer) => {
      const at = performance.now() - invocation.startedAt;
      response.chunks.push({ at, bytes });
      received = Buffer.concat([received, bytes]);
      const separator = received.indexOf(Buffer.alloc(8));
      const bodyBytes = separator < 0 ? 0 : received.length - separator - 8;
      const leaves = options.clientLeavesAfterBodyBytes;
      if (leaves !== undefined && response.clientLeftAt === undefined && bodyBytes >= leaves)
        response.clientLeftAt = at;
    });
    req.on('end', () => {
      response.complete = true;
      response.trailers = req.trailers as Record<string, string>;
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"OK"}');
    });
  };

  const server = createServer((req, res) => {
    const path = req.url ?? '';
    if (req.method === 'GET' && path === `${BASE}/invocation/next`) return next(res);
    if (req.method === 'POST' && path === `${BASE}/init/error`) {
      void readBody(req).then((body) => {
        initErrors.push(body);
        res.writeHead(202).end('{"status":"OK"}');
      });
      return;
    }
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(path);
    if (req.method !== 'POST' || !match || decodeURIComponent(match[1]) !== current?.invocation.requestId) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"errorMessage":"unknown invocation","errorType":"InvalidRequestID"}');
      return;
    }
    if (match[2] === 'response') return receiveResponse(req, res);
    void readBody(req).then((body) => {
      current!.invocation.error = { headers: req.headers, body };
      res.writeHead(202).end('{"status":"OK"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    ready,
    initErrors,
    nextCalls: () => nextCalls,
    invoke: (event, options = {}) =>
      new Promise((done) => {
        queue.push({ event, options, done });
        handOut();
      }),
    close: () =>
      new Promise((resolve) => {
        if (current) clearTimeout(current.timer);
        waiting?.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
