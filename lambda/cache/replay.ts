import { Readable } from 'node:stream';
import { asObject, tryParseJson } from '../base/json';
import type { CacheKind, Dialect } from '../providers/types';
import { SseDecoder } from '../sse/sse-decoder';
import type { SseEvent } from '../sse/sse-event';
import { EventStreamDecoder, type EventStreamMessage } from '../eventstream/event-stream-decoder';
import { assembleChatResponse, synthesizeChatEvents } from './replay/chat';
import { assembleConverseResponse, synthesizeConverseFrames } from './replay/converse';
import { assembleInvokeResponse, synthesizeInvokeFrames } from './replay/invoke';
import { assembleMessagesResponse, synthesizeMessagesEvents } from './replay/messages';
import { assembleResponsesResponse, synthesizeResponsesEvents } from './replay/responses';
import type { CachedResponse } from './response-cache';

/** How one wire format turns a stored answer into the other form. */
interface FormReplay {
  /** Rebuilds the JSON response a stream described (serving a stored stream to a non-streaming request). */
  assemble(events: SseEvent[]): unknown;
  /** The events a streaming request would have received for a JSON response (serving a stored JSON answer as a stream). */
  synthesize(body: unknown): string[];
}

const chatReplay: FormReplay = { assemble: assembleChatResponse, synthesize: synthesizeChatEvents };

/**
 * The same for an API whose streams are AWS event streams (Bedrock): a JSON endpoint and its
 * streaming twin share a cache kind. `undefined` means the answer holds something that does not
 * convert exactly (another model family's body, a block type not known here): the hit is then
 * served as a miss, never as an approximate answer.
 */
interface EventStreamReplay {
  assemble(messages: readonly EventStreamMessage[]): unknown;
  synthesize(body: unknown): Buffer[] | undefined;
}

const EVENT_STREAM_REPLAYS: Partial<Record<CacheKind, EventStreamReplay>> = {
  converse: { assemble: assembleConverseResponse, synthesize: synthesizeConverseFrames },
  invoke: { assemble: assembleInvokeResponse, synthesize: synthesizeInvokeFrames },
};

const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

/**
 * One per kind of cacheable endpoint that answers in either form as JSON or SSE, found through the
 * endpoint's dialect (`dialect.cache.kind`).
 */
const REPLAYS: Partial<Record<CacheKind, FormReplay>> = {
  chat: chatReplay,
  // Embeddings are never streamed by the provider; their answers are chat-completions-shaped JSON.
  embeddings: chatReplay,
  messages: { assemble: assembleMessagesResponse, synthesize: synthesizeMessagesEvents },
  responses: { assemble: assembleResponsesResponse, synthesize: synthesizeResponsesEvents },
};

function formReplay(dialect: Dialect): FormReplay {
  // Only a dialect with a cache kind has entries stored (cache-request.ts).
  const replay = dialect.cache && REPLAYS[dialect.cache.kind];
  if (!replay) throw new Error(`The ${dialect.name} dialect has no cached answers to replay in another form.`);
  return replay;
}

export interface ReplayRequest {
  dialect: Dialect;
  /** The request asked for `stream: true`. */
  stream: boolean;
  /**
   * Take out of each event what asking for stream usage adds: for a client that didn't ask, of a
   * provider that sends stream usage only when asked (Mistral and Groq always send it).
   */
  hideAddedUsage: boolean;
  /** The request asked for stream usage (`stream_options.include_usage`). */
  clientAskedForUsage: boolean;
}

function decodeAll(text: string): SseEvent[] {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

/**
 * A stored response in the form the request asks for (docs/caching.md, "How a hit is served"): a
 * stored stream replays as a stream or is assembled into one JSON answer; a
 * stored JSON answer is sent as is or as the dialect's stream of events. Undefined when the stored
 * answer cannot be given exactly in that form: the request is then a miss.
 */
export function replayCached(
  entry: CachedResponse,
  request: ReplayRequest,
): { contentType: string; body: Readable } | undefined {
  const eventStream = request.dialect.cache && EVENT_STREAM_REPLAYS[request.dialect.cache.kind];
  if (eventStream) return replayEventStreamKind(entry, request.stream, eventStream);
  if (entry.format === 'eventstream') return undefined;
  if (!request.stream) {
    if (entry.format === 'json') return { contentType: entry.contentType, body: Readable.from([entry.body]) };
    const assembled = formReplay(request.dialect).assemble(decodeAll(entry.body));
    return { contentType: 'application/json', body: Readable.from([JSON.stringify(assembled)]) };
  }
  const events = decodeAll(
    entry.format === 'sse' ? entry.body : formReplay(request.dialect).synthesize(JSON.parse(entry.body)).join(''),
  );
  // A stream made from a JSON answer carries its usage in a usage-only chunk, so only to a client that
  // asked for one: providers that always send stream usage (Mistral, Groq) put it on their last choice
  // chunk, and a chunk without a choice would break clients that read choices[0] of every chunk.
  const hide = entry.format === 'json' ? !request.clientAskedForUsage : request.hideAddedUsage;
  const sent = events.map((event) => (hide ? request.dialect.withoutAddedUsage(event) : event.raw)).filter(Boolean);
  // One event per chunk, as a provider sends them, so the client's stream handling is exercised for real.
  return {
    contentType: entry.format === 'sse' ? entry.contentType : 'text/event-stream; charset=utf-8',
    body: Readable.from(sent),
  };
}

/** A stored answer of an endpoint pair whose streams are AWS event streams: as it came (frame by frame, byte for byte), or converted. */
function replayEventStreamKind(
  entry: CachedResponse,
  stream: boolean,
  replay: EventStreamReplay,
): { contentType: string; body: Readable } | undefined {
  if (entry.format === 'sse') return undefined;
  if (entry.format === (stream ? 'eventstream' : 'json')) {
    return {
      contentType: entry.contentType,
      body: Readable.from(entry.format === 'json' ? [entry.body] : eventStreamFrames(entry.body)),
    };
  }
  if (stream) {
    const frames = replay.synthesize(tryParseJson(entry.body));
    // One frame per chunk, as Bedrock sends them.
    return frames && { contentType: EVENT_STREAM_TYPE, body: Readable.from(frames) };
  }
  const decoder = new EventStreamDecoder();
  const messages = eventStreamFrames(entry.body).flatMap((frame) => decoder.push(frame));
  decoder.end();
  const assembled = decoder.problem ? undefined : replay.assemble(messages);
  return assembled === undefined
    ? undefined
    : { contentType: 'application/json', body: Readable.from([JSON.stringify(assembled)]) };
}

/** A stored event stream's frames, from its base64 lines. */
export function eventStreamFrames(stored: string): Buffer[] {
  return stored
    .split('\n')
    .filter(Boolean)
    .map((line) => Buffer.from(line, 'base64'));
}

/** How a request wants a stored answer replayed, read from what it sent. */
export function replayRequestFor({
  dialect,
  stream,
  body,
  streamUsage,
}: {
  dialect: Dialect;
  stream: boolean;
  body?: Record<string, unknown>;
  streamUsage: 'always' | 'when-asked';
}): ReplayRequest {
  // A client that didn't ask for stream usage never saw the usage-only event the proxy asked for.
  const clientAskedForUsage = asObject(body?.stream_options)?.include_usage === true;
  return { dialect, stream, clientAskedForUsage, hideAddedUsage: streamUsage === 'when-asked' && !clientAskedForUsage };
}
