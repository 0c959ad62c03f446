import { encodeEventStreamMessage, type EventStreamMessage } from '../../eventstream/event-stream-decoder';
import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';

/*
 * Converts between Bedrock Converse's two answer forms, for cache hits served in the other form
 * (docs/caching.md, "How a hit is served"): a stored ConverseStream answer assembled into the JSON
 * Converse returns, and a stored Converse answer turned into the event stream ConverseStream sends.
 * Only what converts exactly is converted — text, tool use and reasoning blocks; anything else
 * (an event or block type not known here) gives `undefined`, and the hit becomes a miss.
 */

/** Converse fields that the stream carries in its closing `messageStop` event, the rest of the answer's top level in `metadata`. */
const STOP_FIELDS = new Set(['stopReason', 'additionalModelResponseFields']);
const METADATA_FIELDS = new Set(['usage', 'metrics', 'trace', 'performanceConfig', 'serviceTier']);

/** The Converse JSON answer a ConverseStream answer describes, or undefined when it holds anything not converted exactly. */
export function assembleConverseResponse(messages: readonly EventStreamMessage[]): JsonObject | undefined {
  let role: unknown;
  const content: JsonObject[] = [];
  const toolInput = new Map<number, string>();
  const top: JsonObject = {};
  let stopped = false;
  let metadata = false;
  for (const message of messages) {
    const payload =
      message.messageType === 'event' ? asObject(tryParseJson(message.payload.toString('utf8'))) : undefined;
    if (!payload) return undefined;
    // `p` is padding Bedrock adds to every event (its length hides the content's), not part of the answer.
    const { p: _padding, ...fields } = payload;
    switch (message.eventType) {
      case 'messageStart':
        role = fields.role;
        break;
      case 'contentBlockStart': {
        const index = blockIndex(fields, content);
        const start = asObject(fields.start);
        const toolUse = asObject(start?.toolUse);
        if (index === undefined || !toolUse || Object.keys(start!).length !== 1) return undefined;
        content[index] = { toolUse: { ...toolUse } };
        toolInput.set(index, '');
        break;
      }
      case 'contentBlockDelta': {
        const index = blockIndex(fields, content);
        const delta = asObject(fields.delta);
        if (index === undefined || !delta || !applyDelta(content, index, delta, toolInput)) return undefined;
        break;
      }
      case 'contentBlockStop':
        break;
      case 'messageStop':
        if (!copyKnown(fields, STOP_FIELDS, top)) return undefined;
        stopped = true;
        break;
      case 'metadata':
        if (!copyKnown(fields, METADATA_FIELDS, top)) return undefined;
        metadata = true;
        break;
      default:
        return undefined;
    }
  }
  if (
    !stopped ||
    !metadata ||
    role === undefined ||
    content.some((block) => block === undefined) ||
    content.length !== Object.keys(content).length
  )
    return undefined;
  for (const [index, json] of toolInput) {
    const input = json.trim() ? tryParseJson(json) : {};
    if (input === undefined) return undefined;
    (content[index].toolUse as JsonObject).input = input;
  }
  return { output: { message: { role, content } }, ...top };
}

/** The index of the block an event is about: the next one or one already open, never a gap. */
function blockIndex(fields: JsonObject, content: JsonObject[]): number | undefined {
  const index = fields.contentBlockIndex;
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index <= content.length
    ? index
    : undefined;
}

function copyKnown(fields: JsonObject, known: Set<string>, into: JsonObject): boolean {
  for (const [field, value] of Object.entries(fields)) {
    if (!known.has(field)) return false;
    into[field] = value;
  }
  return true;
}

/** Adds one delta to its block; false for a delta this module does not convert exactly. */
function applyDelta(content: JsonObject[], index: number, delta: JsonObject, toolInput: Map<number, string>): boolean {
  const keys = Object.keys(delta);
  if (keys.length !== 1) return false;
  const block = content[index];
  const text = asString(delta.text);
  if (text !== undefined) {
    if (block && typeof block.text !== 'string') return false;
    content[index] = { text: (asString(block?.text) ?? '') + text };
    return true;
  }
  const toolUse = asObject(delta.toolUse);
  if (toolUse) {
    const input = asString(toolUse.input);
    if (!block?.toolUse || input === undefined || Object.keys(toolUse).length !== 1) return false;
    toolInput.set(index, (toolInput.get(index) ?? '') + input);
    return true;
  }
  const reasoning = asObject(delta.reasoningContent);
  if (reasoning) return applyReasoning(content, index, reasoning);
  return false;
}

/** Reasoning arrives as text pieces then a signature, or as one redacted blob (base64, as the JSON answer has it). */
function applyReasoning(content: JsonObject[], index: number, reasoning: JsonObject): boolean {
  const keys = Object.keys(reasoning);
  if (keys.length !== 1) return false;
  const existing = content[index] && asObject(content[index].reasoningContent);
  if (content[index] && !existing) return false;
  if (typeof reasoning.redactedContent === 'string') {
    if (existing) return false;
    content[index] = { reasoningContent: { redactedContent: reasoning.redactedContent } };
    return true;
  }
  const text = existing ? asObject(existing.reasoningText) : {};
  if (!text) return false;
  if (typeof reasoning.text === 'string') text.text = (asString(text.text) ?? '') + reasoning.text;
  else if (typeof reasoning.signature === 'string') text.signature = reasoning.signature;
  else return false;
  content[index] = { reasoningContent: { reasoningText: text } };
  return true;
}

/** The ConverseStream frames for a stored Converse answer, or undefined when it holds anything not converted exactly. */
export function synthesizeConverseFrames(body: unknown): Buffer[] | undefined {
  const answer = asObject(body);
  const output = asObject(answer?.output);
  const message = asObject(output?.message);
  if (!answer || !output || !message || Object.keys(output).length !== 1 || !Array.isArray(message.content))
    return undefined;
  if (Object.keys(message).some((field) => field !== 'role' && field !== 'content')) return undefined;
  const stop: JsonObject = {};
  const metadata: JsonObject = {};
  for (const [field, value] of Object.entries(answer)) {
    if (field === 'output') continue;
    if (STOP_FIELDS.has(field)) stop[field] = value;
    else if (METADATA_FIELDS.has(field)) metadata[field] = value;
    else return undefined;
  }
  const frames = [event('messageStart', { role: message.role })];
  for (const [index, block] of (message.content as unknown[]).entries()) {
    const events = blockEvents(asObject(block), index);
    if (!events) return undefined;
    frames.push(...events, event('contentBlockStop', { contentBlockIndex: index }));
  }
  frames.push(event('messageStop', stop), event('metadata', metadata));
  return frames;
}

function blockEvents(block: JsonObject | undefined, index: number): Buffer[] | undefined {
  if (!block || Object.keys(block).length !== 1) return undefined;
  const delta = (fields: JsonObject) => event('contentBlockDelta', { contentBlockIndex: index, delta: fields });
  if (typeof block.text === 'string') return [delta({ text: block.text })];
  const toolUse = asObject(block.toolUse);
  if (toolUse) {
    const { input, ...start } = toolUse;
    return [
      event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: start } }),
      delta({ toolUse: { input: JSON.stringify(input ?? {}) } }),
    ];
  }
  const reasoning = asObject(block.reasoningContent);
  if (reasoning && Object.keys(reasoning).length === 1) {
    if (typeof reasoning.redactedContent === 'string')
      return [delta({ reasoningContent: { redactedContent: reasoning.redactedContent } })];
    const text = asObject(reasoning.reasoningText);
    if (
      !text ||
      typeof text.text !== 'string' ||
      Object.keys(text).some((field) => field !== 'text' && field !== 'signature')
    )
      return undefined;
    const frames = [delta({ reasoningContent: { text: text.text } })];
    if (typeof text.signature === 'string') frames.push(delta({ reasoningContent: { signature: text.signature } }));
    return frames;
  }
  return undefined;
}

const event = (type: string, payload: JsonObject) => encodeEventStreamMessage({ event: type }, payload);
