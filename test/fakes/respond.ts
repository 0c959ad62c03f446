/** Writes a prepared response to the socket, with the timing and faults a test asked for. */
import type { ServerResponse } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';

export interface WritePlan {
  status: number;
  headers: Record<string, string>;
  /** The body, one buffer per SSE event (a JSON body is one buffer). */
  events: Buffer[];
  stream: boolean;
  chunkIntervalMs?: number;
  firstEventDelayMs?: number;
  firstEventWhen?: Promise<unknown>;
  resetMidStream?: number;
  /** Send this many events, then nothing more, the connection left open (a stream that stalls). */
  stallAfter?: number;
  dripBytesPerSecond?: number;
  /** Never end the body: every event is written, then the connection stays open until the client leaves. */
  holdOpen?: boolean;
  /** After the first event, keep the stream going until this settles: `end` sends the rest, `reset` cuts it. */
  streamUntil?: Promise<'end' | 'reset'>;
}

/** Blocks no SSE decoder can make sense of; the valid events around them are untouched. */
export const MALFORMED_SSE_BLOCKS: readonly Buffer[] = [
  Buffer.from('data: {"choices":[{"delta":{"content":"cut off\n\n'),
  Buffer.from('this line has no field name\n\n'),
  Buffer.from('data: not json at all\n\n'),
];

export const HTML_ERROR_BODY =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';
export const TRUNCATED_JSON_BODY =
  '{"id":"resp_truncated","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Half an ans';

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

const write = (res: ServerResponse, chunk: Buffer) =>
  new Promise<void>((resolve) => {
    res.write(chunk, () => resolve());
  });

/**
 * Sends the plan. `destroySocket` is how the fake cuts a connection itself, so that
 * it is not mistaken for a client that went away.
 */
export async function writeResponse(res: ServerResponse, plan: WritePlan, destroySocket: () => void): Promise<void> {
  const slow =
    plan.chunkIntervalMs ||
    plan.firstEventDelayMs ||
    plan.firstEventWhen ||
    plan.resetMidStream !== undefined ||
    plan.stallAfter !== undefined ||
    plan.dripBytesPerSecond ||
    plan.holdOpen ||
    plan.streamUntil;
  if (!slow) {
    if (!plan.stream) plan.headers['content-length'] = String(plan.events[0]!.length);
    res.writeHead(plan.status, plan.headers);
    res.end(plan.events.length === 1 ? plan.events[0] : Buffer.concat(plan.events));
    return;
  }

  let events = plan.events;
  let resetAfter = plan.resetMidStream;
  if (!plan.stream) {
    const body = events[0]!;
    plan.headers['content-length'] = String(body.length);
    if (resetAfter !== undefined) {
      const half = Math.floor(body.length / 2);
      events = [body.subarray(0, half), body.subarray(half)];
      resetAfter = 1;
    }
  }
  res.writeHead(plan.status, plan.headers);
  res.flushHeaders();

  if (plan.dripBytesPerSecond) {
    await drip(res, Buffer.concat(events), plan.dripBytesPerSecond);
    if (!res.destroyed) res.end();
    return;
  }

  for (let i = 0; i < events.length; i++) {
    if (resetAfter === 0) return destroySocket();
    if (i === 0 && plan.firstEventDelayMs) await sleep(plan.firstEventDelayMs);
    if (i === 0 && plan.firstEventWhen) await plan.firstEventWhen.catch(() => undefined);
    if (i > 0 && plan.chunkIntervalMs) await sleep(plan.chunkIntervalMs);
    // The connection dies where the next event would have come, after the interval when there is one.
    if (i > 0 && resetAfter === i) return destroySocket();
    if (i > 0 && plan.stallAfter === i) return;
    if (i === 1 && plan.streamUntil && (await keepStreaming(res, plan.streamUntil)) === 'reset') return destroySocket();
    if (res.destroyed) return;
    await write(res, events[i]!);
  }
  if (resetAfter !== undefined) return destroySocket();
  if (plan.holdOpen) return;
  if (!res.destroyed) res.end();
}

/** The stream's comment lines, one a few times a second, until `until` settles: a provider still answering. */
async function keepStreaming(res: ServerResponse, until: Promise<'end' | 'reset'>): Promise<'end' | 'reset'> {
  let outcome: 'end' | 'reset' | undefined;
  void until.then((settled) => (outcome = settled));
  while (outcome === undefined && !res.destroyed) {
    await write(res, Buffer.from(': still answering\n\n'));
    await Promise.race([until, sleep(100)]);
  }
  return outcome ?? 'reset';
}

async function drip(res: ServerResponse, body: Buffer, bytesPerSecond: number): Promise<void> {
  const tickMs = Math.max(10, 1000 / bytesPerSecond);
  const bytesPerTick = Math.max(1, Math.round((bytesPerSecond * tickMs) / 1000));
  for (let offset = 0; offset < body.length; offset += bytesPerTick) {
    if (res.destroyed) return;
    if (offset > 0) await sleep(tickMs);
    if (res.destroyed) return;
    await write(res, body.subarray(offset, offset + bytesPerTick));
  }
}

const COMPRESS: Record<'gzip' | 'deflate' | 'deflate-raw' | 'br', [string, (body: Buffer) => Buffer]> = {
  gzip: ['gzip', gzipSync],
  deflate: ['deflate', deflateSync],
  'deflate-raw': ['deflate', deflateRawSync],
  br: ['br', brotliCompressSync],
};

/**
 * Compresses the plan's body in place, setting `content-encoding`; a stream's
 * compressed bytes are cut into as many writes as it had events, at arbitrary
 * points. Returns the compressed bytes.
 */
export function compressPlan(plan: WritePlan, coding: keyof typeof COMPRESS): Buffer {
  const [name, compress] = COMPRESS[coding];
  const encoded = compress(Buffer.concat(plan.events));
  plan.headers['content-encoding'] = name;
  const pieces = Math.max(1, Math.min(plan.events.length, encoded.length));
  const size = Math.ceil(encoded.length / pieces);
  plan.events = Array.from({ length: Math.ceil(encoded.length / size) }, (_, i) =>
    encoded.subarray(i * size, (i + 1) * size),
  );
  return encoded;
}
