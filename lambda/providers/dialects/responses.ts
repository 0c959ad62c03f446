import type { SseEvent } from '../../sse/sse-event';
import type { Dialect, StreamOutcome } from '../types';
import { tokenCount, type Usage } from '../usage';
import { findErrorMessage } from './error-text';
import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';
import { openAiErrorBody } from './openai-errors';
import { validateResponsesBody } from './validation';

/** The events that end a Responses stream; each carries the whole response, usage included. */
export const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Responses API usage: `input_tokens` includes the cached ones (`input_tokens_details.cached_tokens`,
 * priced at the cache-read rate); `output_tokens` already includes reasoning tokens, which are not added again.
 */
function usageFrom(usage: JsonObject): Usage {
  return {
    inputTokens: tokenCount(usage.input_tokens),
    outputTokens: tokenCount(usage.output_tokens),
    cacheReadTokens: tokenCount(asObject(usage.input_tokens_details)?.cached_tokens),
    cacheWriteTokens: 0,
  };
}

function read(response: JsonObject | undefined): { model?: string; usage?: Usage } {
  const usage = asObject(response?.usage);
  return { model: asString(response?.model), usage: usage && usageFrom(usage) };
}

/** The event's type: the `event:` line when present, else the `type` inside its data. */
function eventType(event: SseEvent): string | undefined {
  return event.event ?? /"type"\s*:\s*"([^"]+)"/.exec(event.data)?.[1];
}

export const responsesDialect: Dialect = {
  name: 'responses',
  credential: { header: 'authorization', scheme: 'Bearer' },
  validate: validateResponsesBody,
  errorBody: openAiErrorBody,
  upstreamErrorMessage: findErrorMessage,
  readResponse: (body) => read(asObject(body)),

  newStreamReader() {
    let outcome: StreamOutcome = { complete: false };
    return {
      onEvent(event: SseEvent) {
        const type = eventType(event);
        // Deltas are most of a stream and say nothing about usage: they are not parsed.
        if (type === 'response.created' && outcome.model === undefined) {
          outcome = { ...outcome, model: asString(asObject(asObject(tryParseJson(event.data))?.response)?.model) };
        } else if (type && TERMINAL_EVENTS.has(type)) {
          const response = asObject(asObject(tryParseJson(event.data))?.response);
          const found = read(response);
          const failure = type === 'response.failed' ? (findErrorMessage(response) ?? 'response failed') : undefined;
          outcome = {
            model: found.model ?? outcome.model,
            usage: found.usage,
            error: failure ?? outcome.error,
            complete: true,
          };
        } else if (type === 'error') {
          outcome = { ...outcome, error: findErrorMessage(tryParseJson(event.data)) ?? 'stream error' };
        }
      },
      outcome: () => outcome,
    };
  },

  streamErrorEvent: (message, cause) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', code: cause === 'stalled' ? 'upstream_stalled' : 'upstream_connection_closed', message, param: null })}\n\n`,
  // Responses streams always report usage: nothing to ask for, nothing to hide.
  withoutAddedUsage: (event) => event.raw,
  requestStreamUsage: (_body, raw) => ({ body: raw, added: false }),
  requestBody: 'json',
  // A follow-up turn's answer depends on the conversation the provider keeps: never served from the cache.
  cache: {
    kind: 'responses',
    allowed: (body) => (body.previous_response_id ?? null) === null && (body.conversation ?? null) === null,
  },
  billing: 'tokens',
};
