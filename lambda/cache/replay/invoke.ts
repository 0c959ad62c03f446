import { encodeEventStreamMessage, type EventStreamMessage } from '../../eventstream/event-stream-decoder';
import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';
import { SseDecoder } from '../../sse/sse-decoder';
import type { SseEvent } from '../../sse/sse-event';
import { assembleMessagesResponse, synthesizeMessagesEvents } from './messages';

/*
 * Converts between InvokeModel's two answer forms for Anthropic's messages body, for cache hits
 * served in the other form (docs/caching.md, "How a hit is served"): each `chunk` event of
 * InvokeModelWithResponseStream carries one event of Anthropic's own stream (JSON, base64 in
 * `bytes`), so the conversion is the Messages API's, wrapped in chunks. Other model families' bodies
 * have no stream form known here: `undefined`, and the hit becomes a miss.
 */

/** What Bedrock adds to the last chunk: the call's token counts (and latencies, which a replay cannot know). */
const METRICS_FIELD = 'amazon-bedrock-invocationMetrics';
const ANTHROPIC_EVENTS = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
]);
/** The deltas `assembleMessagesResponse` folds into their block; any other would be dropped, so it is not converted. */
const KNOWN_DELTAS = new Set([
  'text_delta',
  'thinking_delta',
  'signature_delta',
  'citations_delta',
  'input_json_delta',
]);

/** The InvokeModel JSON answer a stored InvokeModelWithResponseStream answer describes (Anthropic's messages body only). */
export function assembleInvokeResponse(messages: readonly EventStreamMessage[]): unknown {
  const events: SseEvent[] = [];
  let stopped = false;
  for (const message of messages) {
    if (message.messageType !== 'event' || message.eventType !== 'chunk') return undefined;
    const bytes = asString(asObject(tryParseJson(message.payload.toString('utf8')))?.bytes);
    const chunk =
      bytes === undefined ? undefined : asObject(tryParseJson(Buffer.from(bytes, 'base64').toString('utf8')));
    const type = asString(chunk?.type);
    if (!chunk || !type || !ANTHROPIC_EVENTS.has(type)) return undefined;
    if (type === 'content_block_delta' && !KNOWN_DELTAS.has(asString(asObject(chunk.delta)?.type) ?? ''))
      return undefined;
    if (type === 'message_stop') stopped = true;
    const { [METRICS_FIELD]: _metrics, ...event } = chunk;
    events.push({ event: type, data: JSON.stringify(event), raw: '' });
  }
  return stopped ? assembleMessagesResponse(events) : undefined;
}

/**
 * The InvokeModelWithResponseStream frames for a stored InvokeModel answer (Anthropic's messages
 * body only). The last chunk carries Bedrock's token counts, read from the body's usage; the
 * latencies Bedrock adds there are left out, since a replay has none to report.
 */
export function synthesizeInvokeFrames(body: unknown): Buffer[] | undefined {
  const message = asObject(body);
  if (message?.type !== 'message' || !Array.isArray(message.content)) return undefined;
  const decoder = new SseDecoder();
  const events = [...decoder.push(synthesizeMessagesEvents(message).join('')), ...decoder.end()];
  return events.map((event) => {
    const data = asObject(tryParseJson(event.data)) ?? {};
    const chunk =
      event.event === 'message_stop'
        ? { ...data, [METRICS_FIELD]: invocationMetrics(asObject(message.usage) ?? {}) }
        : data;
    return encodeEventStreamMessage(
      { event: 'chunk' },
      { bytes: Buffer.from(JSON.stringify(chunk), 'utf8').toString('base64') },
    );
  });
}

/** Bedrock's counts for Anthropic models: input without the prompt cache's reads and writes, which it counts apart. */
function invocationMetrics(usage: JsonObject): JsonObject {
  const metrics: JsonObject = { inputTokenCount: usage.input_tokens, outputTokenCount: usage.output_tokens };
  if (typeof usage.cache_read_input_tokens === 'number')
    metrics.cacheReadInputTokenCount = usage.cache_read_input_tokens;
  if (typeof usage.cache_creation_input_tokens === 'number')
    metrics.cacheWriteInputTokenCount = usage.cache_creation_input_tokens;
  return metrics;
}
