/**
 * The relay's lifecycle against a real HTTP response from a server on loopback: every way a
 * body can end is reported once, with what the client's stream gets at its end.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, type Transform } from 'node:stream';
import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { UsageTap } from '../../../lambda/streaming/usage-tap';
import { SecretRedactor } from '../../../lambda/streaming/redact';
import { relayBody, type RelayEnd } from '../../../lambda/streaming/relay';
import { bodyDecoding } from '../../../lambda/upstream/content-encoding';

type Behaviour = (response: ServerResponse) => void;

let server: Server;
let origin: string;
let behaviour: Behaviour;
/** Resolves when the server sees the current request's connection close. */
let upstreamClosed: Promise<void>;

beforeAll(async () => {
  server = createServer((_req, response) => {
    upstreamClosed = new Promise((resolve) => response.once('close', () => resolve()));
    behaviour(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function upstreamResponse(): Promise<{ body: IncomingMessage; abort(): void }> {
  return new Promise((resolve, reject) => {
    const call = request(origin, { method: 'POST', agent: false }, (body) =>
      resolve({ body, abort: () => call.destroy() }),
    );
    call.on('error', (error) => (call.destroyed ? undefined : reject(error)));
    call.end();
  });
}

const SECRET = 'sk-proxy-relay-test-secret-0123456789';

interface Relayed {
  ends: RelayEnd[];
  /** What the client read, once its stream is over (ended or destroyed). */
  received: Promise<{ text: string; error?: string }>;
  tap: Transform;
  /**
   * The proxy's side of the upstream response has closed (the last event the relay listens to) and
   * the turn its listeners ran in is over: an end reported twice would be in `ends` by then.
   */
  upstreamDone: Promise<void>;
}

async function relay(
  serve: Behaviour,
  options: { stallMs?: number; sse?: boolean; gzip?: boolean; tap?: () => Transform } = {},
): Promise<Relayed> {
  behaviour = serve;
  const upstream = await upstreamResponse();
  const tap = options.tap?.() ?? new PassThrough();
  const ends: RelayEnd[] = [];
  let text = '';
  tap.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const received = new Promise<{ text: string; error?: string }>((resolve) => {
    tap.once('end', () => resolve({ text }));
    tap.once('error', (error) => resolve({ text, error: error.message }));
  });
  relayBody({
    upstream,
    transcoder: options.gzip ? (bodyDecoding('gzip') as { create: () => PassThrough }).create() : undefined,
    redactor: new SecretRedactor([SECRET]),
    tap,
    stallMs: options.stallMs ?? 30_000,
    closingBytes:
      options.sse === false
        ? undefined
        : (reason, cut) => `event: error\ndata: {"cut":"${cut}","reason":"${reason}"}\n\n`,
    onEnd: (end) => ends.push(end),
  });
  const upstreamDone = new Promise<void>((resolve) => {
    const after = () => setImmediate(resolve);
    if (upstream.body.closed) after();
    else upstream.body.once('close', after);
  });
  return { ends, received, tap, upstreamDone };
}

it('a complete body passes through with credentials cut out, even across chunks, and ends once', async () => {
  const { ends, received, upstreamDone } = await relay((response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(`data: {"echo":"${SECRET.slice(0, 10)}`);
    setTimeout(() => response.end(`${SECRET.slice(10)}"}\n\n`), 10);
  });
  expect(await received).toEqual({ text: 'data: {"echo":"[redacted]"}\n\n' });
  await upstreamDone;
  expect(ends).toEqual([{ kind: 'complete' }]);
});

it('a stream cut mid-body ends with the closing event, reported once as closed', async () => {
  const { ends, received, upstreamDone } = await relay((response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: {"n":1}\n\n');
    setTimeout(() => response.socket?.destroy(), 10);
  });
  expect(await received).toEqual({
    text: 'data: {"n":1}\n\nevent: error\ndata: {"cut":"closed","reason":"upstream connection closed mid-response"}\n\n',
  });
  await upstreamDone;
  expect(ends).toEqual([{ kind: 'cut', reason: 'upstream connection closed mid-response' }]);
});

it('a cut JSON body has no closing bytes: the client stream is destroyed with the reason', async () => {
  const { ends, received, upstreamDone } = await relay(
    (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"partial":');
      setTimeout(() => response.socket?.destroy(), 10);
    },
    { sse: false },
  );
  expect(await received).toEqual({ text: '{"partial":', error: 'upstream connection closed mid-response' });
  await upstreamDone;
  expect(ends).toEqual([{ kind: 'cut', reason: 'upstream connection closed mid-response' }]);
});

it('a body that goes quiet past the limit is stopped and reported as stalled', async () => {
  const { ends, received, upstreamDone } = await relay(
    (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"n":1}\n\n');
    },
    { stallMs: 300 },
  );
  const { text } = await received;
  expect(text).toBe(
    'data: {"n":1}\n\nevent: error\ndata: {"cut":"stalled","reason":"upstream stalled for more than 0 s"}\n\n',
  );
  await upstreamClosed;
  await upstreamDone;
  expect(ends).toEqual([{ kind: 'cut', reason: 'upstream stalled for more than 0 s' }]);
});

it('a client that leaves stops the upstream call, and the late upstream close changes nothing', async () => {
  const { ends, tap, upstreamDone } = await relay((response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: {"n":1}\n\n');
  });
  await new Promise((resolve) => tap.once('data', resolve));
  tap.destroy();
  await upstreamClosed;
  await upstreamDone;
  expect(ends).toEqual([{ kind: 'client-gone', reason: 'client disconnected' }]);
});

it('a body that cannot be decoded ends the stream with the closing event, once', async () => {
  const { ends, received, upstreamDone } = await relay(
    (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      response.end('this is not gzip at all');
    },
    { gzip: true },
  );
  const { text } = await received;
  expect(text).toMatch(/^event: error\ndata: \{"cut":"closed","reason":"could not decode the upstream body: /);
  await upstreamDone;
  expect(ends).toHaveLength(1);
  expect(ends[0]).toMatchObject({
    kind: 'cut',
    reason: expect.stringMatching(/^could not decode the upstream body: /),
  });
});

describe('after the terminal event went to the client (a usage tap that knows it)', () => {
  const chatTap = () => new UsageTap({ dialect: chatDialect, format: 'sse', hideAddedUsage: false });
  const ANSWER =
    'data: {"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\ndata: [DONE]\n\n';

  it('a provider connection left open: the client stream ends with the event, complete, and the connection is closed', async () => {
    const { ends, received, upstreamDone } = await relay(
      (response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(ANSWER);
      },
      { tap: chatTap },
    );
    expect(await received).toEqual({ text: ANSWER });
    await upstreamClosed;
    await upstreamDone;
    expect(ends).toEqual([{ kind: 'complete' }]);
  });

  it('a client that closes right after it leaves a complete answer, however the provider goes on', async () => {
    const { ends, tap, upstreamDone } = await relay(
      (response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(ANSWER);
        response.write('data: {"after":"the end"}\n\n');
      },
      { tap: chatTap },
    );
    let text = '';
    await new Promise<void>((resolve) =>
      tap.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('[DONE]')) resolve();
      }),
    );
    tap.destroy();
    await upstreamClosed;
    await upstreamDone;
    expect(text).toBe(ANSWER);
    expect(ends).toEqual([{ kind: 'complete' }]);
  });
});

describe('a client that leaves after the answer ended, before its usage and terminal event', () => {
  const chatTap = () => new UsageTap({ dialect: chatDialect, format: 'sse', hideAddedUsage: false });
  const FINISHED = 'data: {"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
  const USAGE = 'data: {"model":"m","choices":[],"usage":{"prompt_tokens":5000,"completion_tokens":40}}\n\n';

  /** Relays what `serve` sends, and closes the client's side once the finish reason has reached it. */
  async function leaveAtFinish(serve: (response: ServerResponse, clientLeft: Promise<void>) => void) {
    let left!: () => void;
    const clientLeft = new Promise<void>((resolve) => (left = resolve));
    let tap!: UsageTap;
    const relayed = await relay((response) => serve(response, clientLeft), { tap: () => (tap = chatTap()) });
    let text = '';
    await new Promise<void>((resolve) =>
      relayed.tap.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('"finish_reason":"stop"')) resolve();
      }),
    );
    relayed.tap.destroy();
    // The relay hears of it on the tap's close, in a later turn.
    await new Promise((resolve) => setImmediate(resolve));
    left();
    return { ...relayed, usageTap: tap };
  }

  it('the usage and [DONE] that follow are read, nothing passed on: complete, with the exact usage', async () => {
    const { ends, usageTap, upstreamDone } = await leaveAtFinish((response, clientLeft) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(FINISHED);
      void clientLeft.then(() => response.end(`${USAGE}data: [DONE]\n\n`));
    });
    await upstreamDone;
    expect(ends).toEqual([{ kind: 'complete' }]);
    expect(usageTap.result()).toMatchObject({ complete: true, usage: { inputTokens: 5000, outputTokens: 40 } });
  });

  it('a provider that goes quiet: after 5 s the call is stopped and the end says the client left after the answer', async () => {
    const { ends, upstreamDone } = await leaveAtFinish((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(FINISHED);
    });
    await upstreamClosed;
    await upstreamDone;
    expect(ends).toEqual([
      {
        kind: 'left-after-answer',
        reason: "the client left after the answer ended; the provider's usage did not follow within 5 s",
      },
    ]);
  }, 20_000);

  it('a client that leaves before the finish reason stops the call at once: client-gone', async () => {
    const { ends, tap, upstreamDone } = await relay(
      (response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: {"model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n');
      },
      { tap: chatTap },
    );
    await new Promise<void>((resolve) => tap.once('data', () => resolve()));
    tap.destroy();
    await upstreamClosed;
    await upstreamDone;
    expect(ends).toEqual([{ kind: 'client-gone', reason: 'client disconnected' }]);
  });
});
