import type { SseEvent } from '../../sse/sse-event';
import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';

/*
 * Converts between the Messages API's two answer forms, for cache hits served in
 * the other form: a stored stream assembled into one JSON message, and a stored
 * JSON message turned into the stream of events the official SDK reassembles
 * into the same message. Pure functions: no I/O.
 */

/** Blocks whose input arrives as `input_json_delta` fragments. */
const TOOL_INPUT_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);
/** The usage counters a `message_delta` carries; they are running totals, so they overwrite. */
const DELTA_USAGE_FIELDS = [
  'input_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'output_tokens',
  'server_tool_use',
  'output_tokens_details',
];
/** Fields that arrive in `message_delta.delta` and are null until then. */
const DELTA_STOP_FIELDS = ['stop_reason', 'stop_sequence', 'stop_details', 'container'];

/** Rebuilds the JSON message a stream described (message_start, content blocks and their deltas, message_delta). */
export function assembleMessagesResponse(events: SseEvent[]): unknown {
  let message: JsonObject | undefined;
  const content: JsonObject[] = [];
  const toolJson = new Map<number, string>();
  for (const event of events) {
    const data = asObject(tryParseJson(event.data));
    if (!data) continue;
    const type = asString(data.type) ?? event.event;
    if (type === 'message_start') {
      message = { ...asObject(data.message) };
      message.usage = { ...asObject(message.usage) };
    } else if (type === 'content_block_start') {
      const index = indexOf(data, content);
      content[index] = { ...asObject(data.content_block) };
    } else if (type === 'content_block_delta') {
      const index = indexOf(data, content);
      const block = content[index];
      const delta = asObject(data.delta);
      if (!block || !delta) continue;
      applyDelta(block, delta, index, toolJson);
    } else if (type === 'message_delta' && message) {
      Object.assign(message, asObject(data.delta));
      const usage = asObject(data.usage) ?? {};
      for (const [field, value] of Object.entries(usage))
        if (value !== null && value !== undefined) (message.usage as JsonObject)[field] = value;
      for (const [field, value] of Object.entries(data))
        if (!['type', 'delta', 'usage'].includes(field)) message[field] = value;
    }
  }
  if (!message) return undefined;
  for (const [index, json] of toolJson) if (content[index]) content[index].input = parseToolInput(json);
  return { ...message, content: content.filter(Boolean) };
}

function applyDelta(block: JsonObject, delta: JsonObject, index: number, toolJson: Map<number, string>): void {
  switch (delta.type) {
    case 'text_delta':
      block.text = (asString(block.text) ?? '') + (asString(delta.text) ?? '');
      break;
    case 'thinking_delta':
      block.thinking = (asString(block.thinking) ?? '') + (asString(delta.thinking) ?? '');
      break;
    case 'signature_delta':
      block.signature = delta.signature;
      break;
    case 'citations_delta':
      block.citations = [...(Array.isArray(block.citations) ? (block.citations as unknown[]) : []), delta.citation];
      break;
    case 'input_json_delta':
      if (TOOL_INPUT_BLOCKS.has(String(block.type)))
        toolJson.set(index, (toolJson.get(index) ?? '') + (asString(delta.partial_json) ?? ''));
      break;
  }
}

/** Tool input arrives as JSON text in fragments; no fragments (or only empty ones) means `{}`, as the SDK reads it. */
function parseToolInput(json: string): unknown {
  if (!json.trim()) return {};
  const parsed = tryParseJson(json);
  return parsed === undefined ? {} : parsed;
}

function indexOf(data: JsonObject, content: JsonObject[]): number {
  return typeof data.index === 'number' && Number.isInteger(data.index) && data.index >= 0
    ? data.index
    : content.length;
}

/** The events a streaming client would have received for this JSON message, each one framed (`event:` + `data:` + blank line). */
export function synthesizeMessagesEvents(body: unknown): string[] {
  const message = asObject(body) ?? {};
  const usage = asObject(message.usage) ?? {};
  const blocks = Array.isArray(message.content) ? message.content.map((block) => asObject(block) ?? {}) : [];
  const { content: _content, ...rest } = message;
  const start: JsonObject = { ...rest, content: [], usage: { ...usage, output_tokens: 0 } };
  for (const field of DELTA_STOP_FIELDS) if (field in message) start[field] = null;
  const events = [frame('message_start', { type: 'message_start', message: start })];
  blocks.forEach((block, index) => events.push(...blockEvents(block, index)));
  const delta: JsonObject = {};
  for (const field of DELTA_STOP_FIELDS) if (field in message) delta[field] = message[field];
  const deltaUsage: JsonObject = {};
  for (const field of DELTA_USAGE_FIELDS) if (usage[field] !== undefined) deltaUsage[field] = usage[field];
  events.push(frame('message_delta', { type: 'message_delta', delta, usage: deltaUsage }));
  events.push(frame('message_stop', { type: 'message_stop' }));
  return events;
}

function blockEvents(block: JsonObject, index: number): string[] {
  const deltas: JsonObject[] = [];
  let startBlock: JsonObject = block;
  if (block.type === 'text') {
    const { text, citations, ...fields } = block;
    startBlock = {
      ...fields,
      text: '',
      ...(citations !== undefined ? { citations: Array.isArray(citations) ? [] : citations } : {}),
    };
    if (typeof text === 'string' && text) deltas.push({ type: 'text_delta', text });
    if (Array.isArray(citations)) for (const citation of citations) deltas.push({ type: 'citations_delta', citation });
  } else if (block.type === 'thinking') {
    startBlock = { ...block, thinking: '', signature: '' };
    if (typeof block.thinking === 'string' && block.thinking)
      deltas.push({ type: 'thinking_delta', thinking: block.thinking });
    if (typeof block.signature === 'string') deltas.push({ type: 'signature_delta', signature: block.signature });
  } else if (TOOL_INPUT_BLOCKS.has(String(block.type))) {
    startBlock = { ...block, input: {} };
    deltas.push({ type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) });
  }
  return [
    frame('content_block_start', { type: 'content_block_start', index, content_block: startBlock }),
    ...deltas.map((delta) => frame('content_block_delta', { type: 'content_block_delta', index, delta })),
    frame('content_block_stop', { type: 'content_block_stop', index }),
  ];
}

function frame(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
