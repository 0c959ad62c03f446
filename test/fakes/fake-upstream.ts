/**
 * A fake upstream provider: a real HTTP server on 127.0.0.1 that answers in one provider's wire format,
 * serving the fixtures under test/fixtures with the requested model echoed back. One fake per provider.
 *
 *   const fake = await startFakeUpstream({ style: 'anthropic' });
 *   // configure the proxy with UPSTREAM_BASE_URL_PROV_A = fake.url
 *   fake.next({ status: 529 });                 // the next request gets an overloaded error
 *   fake.always({ usage: 'random' });           // every request reports fresh usage numbers
 *   fake.requests[0].headers['x-api-key'];      // what the proxy sent
 *   fake.sentUsage;                             // totals of the usage the fake reported
 *   await fake.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Usage } from '../../lambda/providers/usage';
import { expectedEndpointUsage, expectedUsage } from '../fixtures/index';
import {
  emptyTotals,
  randomUsage,
  seededRandom,
  type Behaviour,
  type FakeUpstreamOptions,
  type RecordedRequest,
  type UsageTotals,
} from './behaviour';
import {
  compressPlan,
  HTML_ERROR_BODY,
  MALFORMED_SSE_BLOCKS,
  TRUNCATED_JSON_BODY,
  writeResponse,
  type WritePlan,
} from './respond';
import {
  DEFAULT_ERROR_MESSAGES,
  STYLES,
  defaultFixture,
  streamErrorEvent,
  type FakeStyle,
  type StyleSpec,
} from './styles';
import { echoBody, findExtraRoute, isEchoPath, renderExtra } from './extra-endpoints';
import { compileTemplate, renderEvent, servedUsage } from './templates';
import { EVENTUALLY_MS } from '../support/patience';

export type { Behaviour, FakeUpstreamOptions, RecordedRequest, UsageTotals } from './behaviour';
export type { FakeStyle } from './styles';

export interface FakeUpstream {
  /** The base URL to configure the proxy with (the proxy appends `/v1/messages` or `/chat/completions`). */
  readonly url: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly style: FakeStyle;
  /** The full path the proxy must call. */
  readonly endpointPath: string;
  readonly requests: readonly RecordedRequest[];
  /** Requests whose client went away before the response ended. */
  readonly aborted: number;
  /** Sum of the usage reported in completed 2xx responses. */
  readonly sentUsage: UsageTotals;
  /** Behaviour for the next request only (queued; merged over `always`). */
  next(behaviour: Behaviour): FakeUpstream;
  /** Behaviour for every request from now on; `undefined` restores the default. */
  always(behaviour: Behaviour | undefined): FakeUpstream;
  /** Forgets requests, counters and scripted behaviour. */
  reset(): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  waitForAborted(count: number, timeoutMs?: number): Promise<void>;
  /** The next `GET /echo/stream` sends its first chunk, then waits for the returned release before the second. */
  holdStream(): () => void;
  close(): Promise<void>;
}

const ZERO: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const style = options.style ?? 'openai';
  const spec: StyleSpec = STYLES[style];
  const basePath = options.basePath ?? spec.basePath;
  const endpointPath = `${basePath}${spec.endpoint}`;
  const streamUsage = options.streamUsage ?? spec.streamUsage;
  const random = seededRandom(options.seed ?? Date.now());
  const record = options.recordRequests ?? true;

  let requests: RecordedRequest[] = [];
  let queue: Behaviour[] = [];
  let persistent: Behaviour = options.behaviour ?? {};
  let aborted = 0;
  let totals = emptyTotals();
  let requestCounter = 0;
  let closing = false;
  let streamGate: Promise<void> | undefined;

  function nativeError(status: number, message?: string): { body: Buffer; contentType: string } {
    const text = JSON.stringify(spec.errorBody(status, message ?? DEFAULT_ERROR_MESSAGES[status] ?? `HTTP ${status}`));
    return { body: Buffer.from(text), contentType: 'application/json' };
  }

  // The messages API takes its key in x-api-key and, like the others, as a bearer token (newer SDKs send that).
  function credentialMatches(req: IncomingMessage, key: string): boolean {
    if (spec.credential === 'x-api-key' && req.headers['x-api-key'] === key) return true;
    return req.headers.authorization === `Bearer ${key}`;
  }

  function plan(
    req: IncomingMessage,
    json: unknown,
    behaviour: Behaviour,
    entry: RecordedRequest,
    raw: Buffer,
  ): WritePlan {
    const requestId = spec.requestIdHeader ? `req_${style}_${String(++requestCounter).padStart(6, '0')}` : undefined;
    const headers: Record<string, string> = {};
    if (spec.requestIdHeader && requestId) headers[spec.requestIdHeader] = requestId;
    entry.response.requestId = requestId;
    const timing = {
      chunkIntervalMs: behaviour.chunkIntervalMs,
      firstEventDelayMs: behaviour.firstEventDelayMs,
      firstEventWhen: behaviour.firstEventWhen,
      resetMidStream: behaviour.resetMidStream,
      stallAfter: behaviour.stallAfter,
      dripBytesPerSecond: behaviour.dripBytesPerSecond,
      holdOpen: behaviour.holdOpen,
      streamUntil: behaviour.streamUntil,
    };
    const errorPlan = (status: number, body: Buffer, contentType: string): WritePlan => ({
      status,
      headers: { ...headers, 'content-type': contentType, ...behaviour.headers },
      events: [body],
      stream: false,
      ...timing,
    });

    if (behaviour.jsonBody !== undefined)
      return {
        status: 200,
        headers: { ...headers, 'content-type': 'application/json', ...behaviour.headers },
        events: [Buffer.from(JSON.stringify(behaviour.jsonBody))],
        stream: false,
        ...timing,
      };
    const extra = findExtraRoute(style, basePath, req.method ?? '', req.url ?? '');
    const echo = isEchoPath(basePath, req.url ?? '');
    if (!extra && !echo) {
      if (req.method !== 'POST') return errorPlan(405, nativeError(405, 'Method not allowed').body, 'application/json');
      if (req.url?.split('?')[0] !== endpointPath)
        return errorPlan(404, nativeError(404, `No route ${req.url}`).body, 'application/json');
    }
    if (options.requireKey && !credentialMatches(req, options.requireKey))
      return errorPlan(401, nativeError(401).body, 'application/json');
    if (behaviour.nonJsonErrorBody)
      return errorPlan(behaviour.status ?? 502, Buffer.from(HTML_ERROR_BODY), 'text/html');
    if (behaviour.invalidJson200) return errorPlan(200, Buffer.from(TRUNCATED_JSON_BODY), 'application/json');
    if (behaviour.status !== undefined && behaviour.status >= 400 && !behaviour.fixture) {
      const raw = behaviour.errorBody;
      const body =
        raw === undefined
          ? nativeError(behaviour.status, behaviour.errorMessage).body
          : Buffer.from(typeof raw === 'string' ? raw : JSON.stringify(raw));
      return errorPlan(behaviour.status, body, 'application/json');
    }

    const body = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
    const wantsStream = body.stream === true;
    if (echo)
      return {
        status: 200,
        headers: { ...headers, 'content-type': 'application/json', ...behaviour.headers },
        events: [echoBody(style, req, raw)],
        stream: false,
        ...timing,
      };
    if (extra) {
      const model = typeof body.model === 'string' ? body.model : undefined;
      const served = renderExtra(extra, wantsStream, model, behaviour.fixture);
      const expected = expectedEndpointUsage(served.fixture.replace('endpoints/', ''));
      entry.response.usage = {
        model: typeof body.model === 'string' ? body.model : (expected.model ?? 'unknown-model'),
        inputTokens: expected.inputTokens,
        outputTokens: expected.outputTokens,
        cacheReadTokens: expected.cacheReadTokens,
        cacheWriteTokens: expected.cacheWriteTokens,
      };
      const contentType = served.stream ? 'text/event-stream; charset=utf-8' : 'application/json';
      return {
        status: behaviour.status ?? 200,
        headers: { ...headers, 'content-type': contentType, ...behaviour.headers },
        events: served.events,
        stream: served.stream,
        ...timing,
      };
    }
    const streamOptions = body.stream_options as Record<string, unknown> | undefined;
    const fixture = behaviour.fixture ?? defaultFixture(style, wantsStream);
    const stream = fixture.endsWith('.sse');
    const wantedUsage = behaviour.usage;
    const template = compileTemplate({
      fixture,
      stripStreamUsage: stream && streamUsage === 'when-asked' && streamOptions?.include_usage !== true,
      usageHoles: wantedUsage !== undefined,
      ...(behaviour.chunks !== undefined ? { chunks: behaviour.chunks } : {}),
      ...(behaviour.hugeResponse !== undefined ? { hugeBytes: behaviour.hugeResponse } : {}),
    });
    const model = typeof body.model === 'string' ? body.model : (expectedUsage(fixture).model ?? 'unknown-model');
    const usage = servedUsage(template, wantedUsage === 'random' ? randomUsage(random) : (wantedUsage ?? ZERO));
    const modelJson = JSON.stringify(model);
    const events = template.events.map((event) => renderEvent(event, modelJson, usage));
    if (stream && behaviour.malformedSse) events.splice(1, 0, ...MALFORMED_SSE_BLOCKS);
    if (stream && behaviour.errorBeforeEnd !== undefined)
      events.splice(events.length - 1, 0, Buffer.from(streamErrorEvent(style, behaviour.errorBeforeEnd)));

    const status = behaviour.status ?? template.status;
    entry.response.usage = status < 300 ? { model, ...usage } : { model, ...ZERO };
    return {
      status,
      headers: {
        ...headers,
        'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json',
        ...(stream ? { 'cache-control': 'no-cache' } : {}),
        ...behaviour.headers,
      },
      events,
      stream,
      ...timing,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, bytes: Buffer): Promise<void> {
    const raw = bytes.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const entry: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : (value ?? ''),
        ]),
      ),
      body: raw,
      json,
      response: { completed: false, aborted: false },
    };
    if (record) requests.push(entry);
    const behaviour: Behaviour = { ...persistent, ...queue.shift() };

    let selfDestroyed = false;
    const destroySocket = () => {
      selfDestroyed = true;
      req.socket.destroy();
    };
    res.on('close', () => {
      if (res.writableFinished || selfDestroyed || closing || (behaviour.holdOpen && entry.response.completed)) return;
      entry.response.aborted = true;
      aborted++;
    });
    res.on('finish', () => {
      entry.response.completed = true;
      const usage = entry.response.usage;
      if (!usage || (entry.response.status ?? 500) >= 300) return;
      totals.responses++;
      totals.inputTokens += usage.inputTokens;
      totals.outputTokens += usage.outputTokens;
      totals.cacheReadTokens += usage.cacheReadTokens;
      totals.cacheWriteTokens += usage.cacheWriteTokens;
    });

    if (behaviour.resetBeforeHeaders) return destroySocket();
    if (behaviour.hang) return;
    if (behaviour.latencyMs) {
      await new Promise<void>((resolve) => setTimeout(resolve, behaviour.latencyMs).unref());
      if (res.destroyed) return;
    }
    if (req.url?.startsWith(`${basePath}/echo/stream`)) {
      // A response whose second half waits for the test: proves the proxy passes the first half on before the end.
      const gate = streamGate ?? Promise.resolve();
      streamGate = undefined;
      entry.response.status = 200;
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('part-1\n');
      await gate;
      res.end('part-2\n');
      return;
    }
    const response = plan(req, json, behaviour, entry, bytes);
    if (behaviour.contentEncoding) entry.response.encodedBody = compressPlan(response, behaviour.contentEncoding);
    entry.response.status = response.status;
    await writeResponse(res, response, destroySocket);
    if (behaviour.holdOpen && !res.destroyed) entry.response.completed = true;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        // A bug in the fake must be loud, not look like a provider answer.
        console.error('fake upstream failed', error);
        if (!res.headersSent) res.writeHead(599).end(String(error));
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const waitFor = async (done: () => boolean, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`fake ${style}: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  const fake: FakeUpstream = {
    url: `${origin}${basePath}`,
    origin,
    style,
    endpointPath,
    get requests() {
      return requests;
    },
    get aborted() {
      return aborted;
    },
    get sentUsage() {
      return { ...totals };
    },
    next(behaviour) {
      queue.push(behaviour);
      return fake;
    },
    always(behaviour) {
      persistent = behaviour ?? options.behaviour ?? {};
      return fake;
    },
    reset() {
      requests = [];
      queue = [];
      persistent = options.behaviour ?? {};
      aborted = 0;
      totals = emptyTotals();
    },
    waitForRequests: (count, timeoutMs = EVENTUALLY_MS) =>
      waitFor(() => requests.length >= count, `${count} requests`, timeoutMs),
    holdStream() {
      let release!: () => void;
      streamGate = new Promise<void>((resolve) => (release = resolve));
      return release;
    },
    waitForAborted: (count, timeoutMs = EVENTUALLY_MS) =>
      waitFor(() => aborted >= count, `${count} aborted requests`, timeoutMs),
    async close() {
      closing = true;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return fake;
}
