import type { SseEvent } from '../../sse/sse-event';
import { asObject, tryParseJson, type JsonObject } from '../../base/json';

/*
 * Converts between the chat-completions API's two answer forms, for cache hits
 * served in the other form: a stored stream of `chat.completion.chunk` events
 * assembled into one `chat.completion`, and a stored `chat.completion` turned
 * into the chunk stream the official SDK accepts. Pure functions: no I/O.
 */

interface ChoiceState {
  index: number;
  message: JsonObject;
  logprobs: JsonObject | null;
  /** Whether the provider sends `logprobs` at all (some compatible servers omit the field). */
  sendsLogprobs: boolean;
  finish_reason: unknown;
  extra: JsonObject;
}

/** Rebuilds the `chat.completion` a chunk stream described. `[DONE]` and anything that isn't a JSON object are skipped. */
export function assembleChatResponse(events: SseEvent[]): unknown {
  let head: JsonObject | undefined;
  let usage: JsonObject | undefined;
  const choices: ChoiceState[] = [];
  for (const event of events) {
    const chunk = asObject(tryParseJson(event.data));
    if (!chunk) continue;
    // `obfuscation` is per-chunk padding, not part of the answer.
    const {
      choices: chunkChoices,
      usage: chunkUsage,
      object: _object,
      obfuscation: _padding,
      x_groq,
      ...fields
    } = chunk;
    // Groq reports usage inside `x_groq`; its other fields (request id, seed) stay with the answer.
    const { usage: groqUsage, ...groqFields } = asObject(x_groq) ?? {};
    if (Object.keys(groqFields).length) fields.x_groq = groqFields;
    // The first chunk names the answer (id, created, model); later chunks may only add what it lacked.
    head = { ...fields, ...head };
    usage = asObject(chunkUsage) ?? asObject(groqUsage) ?? usage;
    if (!Array.isArray(chunkChoices)) continue;
    for (const raw of chunkChoices) {
      const choice = asObject(raw);
      if (!choice) continue;
      const { index, delta, finish_reason, logprobs, ...extra } = choice;
      const at = typeof index === 'number' && Number.isInteger(index) && index >= 0 ? index : 0;
      const state = (choices[at] ??= {
        index: at,
        message: {},
        logprobs: null,
        sendsLogprobs: false,
        finish_reason: null,
        extra: {},
      });
      if ('logprobs' in choice) state.sendsLogprobs = true;
      if (finish_reason) state.finish_reason = finish_reason;
      if (asObject(logprobs)) state.logprobs = mergeLogprobs(state.logprobs, asObject(logprobs)!);
      Object.assign(state.extra, extra);
      const deltaObject = asObject(delta);
      if (deltaObject) mergeDelta(state.message, deltaObject);
    }
  }
  if (!head) return undefined;
  const { id, created, model, ...rest } = head;
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: choices.filter(Boolean).map(finishChoice),
    ...(usage ? { usage } : {}),
    ...rest,
  };
}

function finishChoice(state: ChoiceState): JsonObject {
  const { role, content, ...fields } = state.message;
  return {
    index: state.index,
    message: { role: role ?? 'assistant', content: content ?? null, ...fields },
    ...(state.sendsLogprobs ? { logprobs: state.logprobs } : {}),
    finish_reason: state.finish_reason ?? null,
    ...state.extra,
  };
}

/** Text fields arrive in pieces and are joined; tool calls are merged by index; anything else is set once seen. */
function mergeDelta(message: JsonObject, delta: JsonObject): void {
  for (const [key, value] of Object.entries(delta)) {
    const current = message[key];
    if (value === undefined) continue;
    if (key === 'role') {
      if (value) message.role = value;
    } else if (key === 'tool_calls' && Array.isArray(value)) {
      message.tool_calls = mergeToolCalls(Array.isArray(current) ? current : [], value);
    } else if (key === 'function_call' && asObject(value)) {
      message.function_call = mergeFunction(asObject(current), asObject(value)!);
    } else if (key === 'content') {
      message.content = mergeContent(current, value);
    } else if (typeof value === 'string' && typeof current === 'string') {
      message[key] = current + value;
    } else if (Array.isArray(value) && Array.isArray(current)) {
      message[key] = [...(current as unknown[]), ...(value as unknown[])];
    } else if (value !== null || !(key in message)) {
      message[key] = value;
    }
  }
}

function mergeToolCalls(calls: unknown[], deltas: unknown[]): unknown[] {
  const merged = [...calls];
  for (const raw of deltas) {
    const delta = asObject(raw);
    if (!delta) continue;
    const { index, id, type, function: fn, ...rest } = delta;
    // Without an index (some compatible servers send whole calls) each entry is a new call.
    const at = typeof index === 'number' ? index : merged.length;
    const call: JsonObject = { ...asObject(merged[at]), ...rest };
    if (id) call.id = id;
    if (type) call.type = type;
    if (asObject(fn)) call.function = mergeFunction(asObject(call.function), asObject(fn)!);
    merged[at] = call;
  }
  return merged;
}

function mergeFunction(current: JsonObject | undefined, delta: JsonObject): JsonObject {
  const { name, arguments: args, ...rest } = delta;
  const fn: JsonObject = { name: current?.name ?? '', arguments: current?.arguments ?? '', ...rest };
  if (name) fn.name = name;
  if (typeof args === 'string') fn.arguments = String(fn.arguments) + args;
  return fn;
}

/**
 * Content is usually a string; Mistral's reasoning models send lists of typed
 * parts instead. Adjacent parts of the same kind are joined, so the result has
 * the shape of the non-streamed answer.
 */
function mergeContent(current: unknown, value: unknown): unknown {
  if (value === null) return current ?? null;
  if (typeof value === 'string') {
    if (Array.isArray(current)) return value ? appendParts(current, [{ type: 'text', text: value }]) : current;
    return (typeof current === 'string' ? current : '') + value;
  }
  if (Array.isArray(value)) {
    const base = Array.isArray(current)
      ? current
      : typeof current === 'string' && current
        ? [{ type: 'text', text: current }]
        : [];
    return appendParts(base, value);
  }
  return value;
}

function appendParts(parts: unknown[], more: unknown[]): unknown[] {
  const result = [...parts];
  for (const part of more) {
    const last = asObject(result.at(-1));
    const next = asObject(part);
    if (
      last &&
      next &&
      last.type === next.type &&
      next.type === 'text' &&
      typeof last.text === 'string' &&
      typeof next.text === 'string'
    ) {
      result[result.length - 1] = { ...last, text: last.text + next.text };
    } else if (
      last &&
      next &&
      last.type === next.type &&
      next.type === 'thinking' &&
      Array.isArray(last.thinking) &&
      Array.isArray(next.thinking)
    ) {
      result[result.length - 1] = { ...last, thinking: appendParts(last.thinking, next.thinking) };
    } else {
      result.push(part);
    }
  }
  return result;
}

function mergeLogprobs(current: JsonObject | null, next: JsonObject): JsonObject {
  if (!current) return { ...next };
  const merged: JsonObject = { ...current };
  for (const [key, value] of Object.entries(next)) {
    merged[key] =
      Array.isArray(value) && Array.isArray(merged[key])
        ? [...(merged[key] as unknown[]), ...(value as unknown[])]
        : value;
  }
  return merged;
}

/**
 * The chunk events a streaming client would have received for this
 * `chat.completion`: per choice a role chunk (with the message's other fields),
 * a content chunk, a tool-call chunk and a finish chunk; then a usage chunk and `[DONE]`.
 */
export function synthesizeChatEvents(body: unknown): string[] {
  const completion = asObject(body) ?? {};
  const { choices, usage, object: _object, ...fields } = completion;
  const base: JsonObject = { id: fields.id, object: 'chat.completion.chunk', ...fields };
  const list = Array.isArray(choices) ? choices : [];
  const chunks = list.flatMap((choice, position) => choiceChunks(asObject(choice) ?? {}, position));
  const events = chunks.map((choice) => frame({ ...base, choices: [choice] }));
  if (asObject(usage)) events.push(frame({ ...base, choices: [], usage }));
  events.push('data: [DONE]\n\n');
  return events;
}

/** The `choices[0]` of each chunk that streams one choice. */
function choiceChunks(choice: JsonObject, position: number): JsonObject[] {
  const { index, message, finish_reason, logprobs, ...choiceFields } = choice;
  const at = typeof index === 'number' ? index : position;
  // Mirror the provider: some compatible servers never send `logprobs`.
  const sendsLogprobs = 'logprobs' in choice;
  const chunk = (delta: JsonObject, extra: JsonObject = {}): JsonObject => ({
    index: at,
    delta,
    ...(sendsLogprobs ? { logprobs: null } : {}),
    finish_reason: null,
    ...extra,
  });
  const { role, content, tool_calls, ...messageFields } = asObject(message) ?? {};
  const hasContent = (typeof content === 'string' && content !== '') || Array.isArray(content);
  const hasToolCalls = Array.isArray(tool_calls) && tool_calls.length > 0;
  const roleDelta: JsonObject = { role: role ?? 'assistant', ...messageFields };
  if (content === '') roleDelta.content = '';
  if (tool_calls !== undefined && !hasToolCalls) roleDelta.tool_calls = tool_calls;
  const withLogprobs = sendsLogprobs ? { logprobs: logprobs ?? null } : {};
  const chunks = [chunk(roleDelta, hasContent ? {} : withLogprobs)];
  if (hasContent) chunks.push(chunk({ content }, withLogprobs));
  if (hasToolCalls) chunks.push(chunk({ tool_calls: tool_calls.map((call, i) => ({ ...asObject(call), index: i })) }));
  chunks.push(chunk({}, { finish_reason: finish_reason ?? 'stop', ...choiceFields }));
  return chunks;
}

function frame(data: JsonObject): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}
