import type { SseEvent } from '../../sse/sse-event';
import type { Dialect, StreamOutcome } from '../types';
import { mediaTokens, tokenCount, type Usage } from '../usage';
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
  // Image generation and audio transcription answer in the Responses API's names (`input_tokens`, `output_tokens`).
  if (usage.prompt_tokens === undefined && (usage.input_tokens !== undefined || usage.output_tokens !== undefined))
    return mediaUsageFrom(usage);
  const inputTokens = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  // Some providers leave reasoning tokens out of completion_tokens but count
  // them in total_tokens; the total then tells the real output.
  const fromTotal = tokenCount(usage.total_tokens) - inputTokens;
  const inputDetails = asObject(usage.prompt_tokens_details);
  const cacheReadTokens = tokenCount(inputDetails?.cached_tokens) || tokenCount(usage.prompt_cache_hit_tokens);
  const media = mediaTokens({
    audioInput: tokenCount(inputDetails?.audio_tokens),
    audioOutput: tokenCount(asObject(usage.completion_tokens_details)?.audio_tokens),
  });
  return {
    inputTokens,
    outputTokens: Math.max(completion, fromTotal),
    cacheReadTokens,
    cacheWriteTokens: 0,
    ...(media ? { media } : {}),
  };
}

/**
 * The usage of an image generation (`/images/generations`, `/images/edits`) or an audio
 * transcription: input and output tokens with their image and audio parts (`input_tokens_details`,
 * or `input_token_details` as transcriptions write it).
 */
function mediaUsageFrom(usage: JsonObject): Usage {
  const input = asObject(usage.input_tokens_details) ?? asObject(usage.input_token_details);
  const output = asObject(usage.output_tokens_details) ?? asObject(usage.output_token_details);
  const media = mediaTokens({
    audioInput: tokenCount(input?.audio_tokens),
    audioOutput: tokenCount(output?.audio_tokens),
    imageInput: tokenCount(input?.image_tokens),
    imageOutput: tokenCount(output?.image_tokens),
  });
  return {
    inputTokens: tokenCount(usage.input_tokens),
    outputTokens: tokenCount(usage.output_tokens),
    cacheReadTokens: tokenCount(input?.cached_tokens),
    cacheWriteTokens: 0,
    ...(media ? { media } : {}),
  };
}

/**
 * The event's raw text with its data replaced; every other line (`event:`, `id:`, comments) stays as
 * sent, and so does each line's ending (a provider that ends its lines with CRLF keeps them).
 */
function withDataOf(event: SseEvent, data: string): string {
  // Split keeping the separators: text, ending, text, ending, …, text.
  const parts = event.raw.split(/(\r\n|\r|\n)/);
  const lines: Array<{ text: string; end: string }> = [];
  for (let i = 0; i < parts.length; i += 2) lines.push({ text: parts[i], end: parts[i + 1] ?? '' });
  const first = lines.findIndex((line) => line.text.startsWith('data:'));
  if (first < 0) return event.raw;
  const prefix = lines[first].text.startsWith('data: ') ? 'data: ' : 'data:';
  const end = lines[first].end || '\n';
  return [
    ...lines.slice(0, first),
    ...data.split('\n').map((line) => ({ text: prefix + line, end })),
    ...lines.slice(first + 1).filter((line) => !line.text.startsWith('data:')),
  ]
    .map((line) => line.text + line.end)
    .join('');
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
    let answerEnded = false;
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
        // A finish reason ends the answer; the usage chunk the proxy asked for may still follow it.
        answerEnded ||= /"finish_reason"\s*:\s*"/.test(data);
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
        return { model, usage, error, complete, answerEnded, deliveredChars: delivered };
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
