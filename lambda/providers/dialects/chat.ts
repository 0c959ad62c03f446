import type { SseEvent } from '../../sse/sse-event';
import type { Dialect, StreamOutcome } from '../types';
import { tokenCount, type Usage } from '../usage';
import { deliveredChars } from './delivered-text';
import { findErrorMessage } from './error-text';
import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';
import { setNestedMember, withoutMember } from './json-splice';
import { openAiErrorBody } from './openai-errors';
import { chatBodySchema, validateWith } from './validation';

/** The usage object of a chat response or chunk; Groq puts it under `x_groq`. */
function usageObject(object: JsonObject | undefined): JsonObject | undefined {
  return asObject(object?.usage) ?? asObject(asObject(object?.x_groq)?.usage);
}

export function chatUsageFrom(usage: JsonObject): Usage {
  const inputTokens = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  // Some providers leave reasoning tokens out of completion_tokens but count
  // them in total_tokens; the total then tells the real output.
  const fromTotal = tokenCount(usage.total_tokens) - inputTokens;
  const cacheReadTokens =
    tokenCount(asObject(usage.prompt_tokens_details)?.cached_tokens) || tokenCount(usage.prompt_cache_hit_tokens);
  return { inputTokens, outputTokens: Math.max(completion, fromTotal), cacheReadTokens, cacheWriteTokens: 0 };
}

/** The event's raw text with its data replaced; every other line (`event:`, `id:`, comments) stays as sent. */
function withDataOf(event: SseEvent, data: string): string {
  const lines = event.raw.split('\n');
  const first = lines.findIndex((line) => line.startsWith('data:'));
  if (first < 0) return event.raw;
  const prefix = lines[first].startsWith('data: ') ? 'data: ' : 'data:';
  const dataLines = data.split('\n').map((line) => prefix + line);
  return [
    ...lines.slice(0, first),
    ...dataLines,
    ...lines.slice(first + 1).filter((line) => !line.startsWith('data:')),
  ].join('\n');
}

export const chatDialect: Dialect = {
  name: 'chat',
  credential: { header: 'authorization', scheme: 'Bearer' },

  validate: (body) => validateWith(chatBodySchema, body),

  errorBody: openAiErrorBody,

  upstreamErrorMessage: findErrorMessage,

  readResponse(body) {
    const object = asObject(body);
    const usage = usageObject(object);
    return { model: asString(object?.model), usage: usage && chatUsageFrom(usage) };
  },

  newStreamReader() {
    let model: string | undefined;
    let usage: Usage | undefined;
    let error: string | undefined;
    let complete = false;
    let delivered = 0;
    return {
      onEvent(event: SseEvent) {
        const data = event.data;
        if (!data) return;
        if (data === '[DONE]') {
          complete = true;
          return;
        }
        delivered += deliveredChars(data);
        // Parsing every content chunk would cost CPU per token; only the first
        // chunk (model) and chunks that can carry usage or an error are read.
        if (model !== undefined && !/"usage"\s*:\s*\{|"error"/.test(data)) return;
        const chunk = asObject(tryParseJson(data));
        if (!chunk) return;
        model ??= asString(chunk.model);
        const found = usageObject(chunk);
        if (found) usage = chatUsageFrom(found);
        if (chunk.error !== undefined && chunk.error !== null) error = findErrorMessage(chunk) ?? 'stream error';
      },
      outcome(): StreamOutcome {
        return { model, usage, error, complete, deliveredChars: delivered };
      },
    };
  },

  streamErrorEvent: (message, cause) =>
    `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: cause === 'stalled' ? 'upstream_stalled' : 'upstream_connection_closed' } })}\n\n`,

  // Asked for stream usage, OpenAI adds `"usage":null` to every chunk and a usage-only chunk
  // (`choices: []`) before `[DONE]`; Gemini adds `usage` to its last content chunk. Unasked, neither has any.
  withoutAddedUsage(event: SseEvent): string {
    if (!event.data.includes('"usage"')) return event.raw;
    const chunk = asObject(tryParseJson(event.data));
    if (!chunk || !Object.hasOwn(chunk, 'usage')) return event.raw;
    if (Array.isArray(chunk.choices) && chunk.choices.length === 0 && asObject(chunk.usage) !== undefined) return '';
    return withDataOf(event, withoutMember(Buffer.from(event.data, 'utf8'), 'usage').toString('utf8'));
  },

  requestStreamUsage(body, raw) {
    const options = asObject(body.stream_options);
    if (body.stream !== true || options?.include_usage === true) return { body: raw, added: false };
    return { body: setNestedMember(raw, 'stream_options', 'include_usage', 'true'), added: true };
  },

  requestBody: 'json',
  cache: { kind: 'chat', allowed: () => true },
  billing: 'tokens',
};
