/** The knobs a test turns on a fake upstream, and what the fake remembers about each request. */
import type { Usage } from '../../lambda/providers/usage';
import type { FakeStyle, StreamUsagePolicy } from './styles';

/** How the fake answers. Set per next request with `fake.next(...)` or for all with `fake.always(...)`. */
export interface Behaviour {
  /** Answer with this status. 4xx/5xx get the style's native error body unless `errorBody` is given. */
  status?: number;
  errorMessage?: string;
  /** A raw error body (a string is sent as is, anything else as JSON). */
  errorBody?: unknown;
  /** Extra response headers, e.g. `{ 'retry-after': '7' }`. */
  headers?: Record<string, string>;
  /**
   * Serve this fixture (e.g. `prov-a/prompt-cache.sse`) whatever the request's `stream` says; status from
   * its expected result. On the Responses API route, one of `endpoints/` (`endpoints/openai-responses-failed.sse`).
   */
  fixture?: string;
  /**
   * Answer 200 with exactly this JSON body, on any path (an image generation's or an audio model's answer,
   * a snapshot model id the price data doesn't know), instead of a fixture.
   */
  jsonBody?: unknown;
  /** Usage to report instead of the fixture's; `'random'` draws new numbers per request. */
  usage?: Usage | 'random';
  /** Number of content deltas in a stream (and pieces of the answer in JSON). */
  chunks?: number;
  /** Wait this long before sending headers. */
  latencyMs?: number;
  /** Wait this long between stream events. */
  chunkIntervalMs?: number;
  /** Send the status and headers at once, then wait this long before the first event. */
  firstEventDelayMs?: number;
  /** Send the status and headers at once, then hold the first event until this settles (a test's event, not a time). */
  firstEventWhen?: Promise<unknown>;
  /** Read the request, then never answer. */
  hang?: boolean;
  /** Read the request, then destroy the socket before any header. */
  resetBeforeHeaders?: boolean;
  /** Destroy the socket after this many events, where the next would come (JSON: after half the body). */
  resetMidStream?: number;
  /** Send this many events of a stream, then nothing more, the connection left open until the client leaves. */
  stallAfter?: number;
  /**
   * After the last event, keep the connection open without ending the body (the socket lingers, as a
   * provider's may after its terminal event) until the client goes away. The response counts as
   * `completed` once its last event is written, and is not counted as aborted when the client leaves.
   */
  holdOpen?: boolean;
  /**
   * A stream that goes on until this settles (a test's event, not a time): after the first event,
   * SSE comment lines a few times a second; then `end` sends the rest of the stream, `reset`
   * destroys the socket.
   */
  streamUntil?: Promise<'end' | 'reset'>;
  /** Send the body at this rate. */
  dripBytesPerSecond?: number;
  /**
   * Send the style's own in-stream error event with this message just before the stream's terminal
   * event (`data: [DONE]`, `message_stop`), which still follows: an error the stream reports and ends.
   */
  errorBeforeEnd?: string;
  /** Insert undecodable blocks into the stream (valid events, usage included, still follow). */
  malformedSse?: boolean;
  /** Answer `status` (default 502) with an HTML body. */
  nonJsonErrorBody?: boolean;
  /** Answer 200 with a truncated JSON body. */
  invalidJson200?: boolean;
  /** Pad the answer to about this many bytes (usage stays valid). */
  hugeResponse?: number;
  /**
   * Compress the body with this coding and say so in `content-encoding` (as a provider
   * that ignores `accept-encoding: identity` would); `deflate-raw` sends raw deflate
   * under the name `deflate`, as some servers do. A stream's compressed bytes are cut
   * into as many writes as it has events, at arbitrary points.
   */
  contentEncoding?: 'gzip' | 'deflate' | 'deflate-raw' | 'br';
}

export interface FakeUpstreamOptions {
  /** Which provider this fake imitates. Default `openai`. */
  style?: FakeStyle;
  /** Override the style's stream usage policy. */
  streamUsage?: StreamUsagePolicy;
  /** Override the path of the base URL (the style's real one by default). */
  basePath?: string;
  /** Behaviour applied to every request (as `fake.always`). */
  behaviour?: Behaviour;
  /** Answer 401 unless the request carries this provider key in the style's credential header. */
  requireKey?: string;
  /** Seed for `usage: 'random'`. */
  seed?: number;
  /** Keep a record of every request (default true; a long load run may turn it off). */
  recordRequests?: boolean;
}

export interface SentUsage extends Usage {
  model: string;
}

export interface RecordedResponse {
  status?: number;
  requestId?: string;
  /** The usage the body reported (zero for errors and for streams without usage). */
  usage?: SentUsage;
  /** With `contentEncoding`: the compressed bytes sent. */
  encodedBody?: Buffer;
  /** Every byte was handed to the socket and the response ended. */
  completed: boolean;
  /** The client went away before the response ended. */
  aborted: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-cased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined if it is not JSON. */
  json: unknown;
  response: RecordedResponse;
}

export interface UsageTotals extends Usage {
  /** Responses that completed with a 2xx status. */
  responses: number;
}

export const emptyTotals = (): UsageTotals => ({
  responses: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/** A small seeded generator (mulberry32), so a load run can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomUsage(random: () => number): Usage {
  const int = (max: number) => Math.floor(random() * (max + 1));
  const inputTokens = 1 + int(4000);
  const cacheReadTokens = int(Math.floor(inputTokens / 2));
  const cacheWriteTokens = int(Math.floor((inputTokens - cacheReadTokens) / 2));
  return { inputTokens, outputTokens: 1 + int(1500), cacheReadTokens, cacheWriteTokens };
}
