import type { SseEvent } from '../../sse/sse-event';
import type { Dialect, NativeError, StreamOutcome } from '../types';
import { callCounts, tokenCount, type Usage } from '../usage';
import { deliveredChars } from './delivered-text';
import { findErrorMessage } from './error-text';
import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';
import { messagesBodySchema, validateWith } from './validation';

/** Error types of the messages API, by the status the proxy answers with. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

/** Usage fields of the messages API; input counts cache writes and reads too; `server_tool_use` counts the server-side tool calls. */
function usageFrom(usage: JsonObject): Usage {
  const cacheWriteTokens = tokenCount(usage.cache_creation_input_tokens);
  const cacheReadTokens = tokenCount(usage.cache_read_input_tokens);
  const cacheWrite1hTokens = Math.min(
    cacheWriteTokens,
    tokenCount(asObject(usage.cache_creation)?.ephemeral_1h_input_tokens),
  );
  const serverToolUse = callCounts(usage.server_tool_use);
  return {
    inputTokens: tokenCount(usage.input_tokens) + cacheWriteTokens + cacheReadTokens,
    outputTokens: tokenCount(usage.output_tokens),
    cacheReadTokens,
    cacheWriteTokens,
    ...(cacheWrite1hTokens ? { cacheWrite1hTokens } : {}),
    ...(serverToolUse ? { serverToolUse } : {}),
  };
}

function errorEvent(type: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
}

export const messagesDialect: Dialect = {
  name: 'messages',
  credential: { header: 'x-api-key', alsoAccepted: { header: 'authorization', scheme: 'Bearer' } },

  validate: (body) => validateWith(messagesBodySchema, body),

  errorBody({ status, message }: NativeError): string {
    const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return JSON.stringify({ type: 'error', error: { type, message } });
  },

  upstreamErrorMessage: findErrorMessage,

  readResponse(body) {
    const object = asObject(body);
    const usage = asObject(object?.usage);
    return { model: asString(object?.model), usage: usage && usageFrom(usage) };
  },

  newStreamReader() {
    let model: string | undefined;
    // message_start carries the first usage; each message_delta carries running
    // totals, so later fields overwrite earlier ones (never add).
    let usageFields: JsonObject | undefined;
    let error: string | undefined;
    let complete = false;
    let answerEnded = false;
    let delivered = 0;
    return {
      onEvent(event: SseEvent) {
        switch (event.event) {
          case 'content_block_start':
          case 'content_block_delta':
            delivered += deliveredChars(event.data);
            break;
          case 'message_start': {
            const message = asObject(asObject(tryParseJson(event.data))?.message);
            model = asString(message?.model) ?? model;
            const usage = asObject(message?.usage);
            if (usage) usageFields = { ...usageFields, ...withoutNulls(usage) };
            break;
          }
          case 'message_delta': {
            const usage = asObject(asObject(tryParseJson(event.data))?.usage);
            if (usage) usageFields = { ...usageFields, ...withoutNulls(usage) };
            // The stop reason ends the answer; only `message_stop` follows.
            answerEnded = true;
            break;
          }
          case 'message_stop':
            complete = true;
            break;
          case 'error':
            error = findErrorMessage(tryParseJson(event.data)) ?? 'stream error';
            break;
        }
      },
      outcome(): StreamOutcome {
        return {
          model,
          usage: usageFields && usageFrom(usageFields),
          error,
          complete,
          answerEnded,
          deliveredChars: delivered,
        };
      },
    };
  },

  streamErrorEvent: (message) => errorEvent('api_error', message),
  withoutAddedUsage: (event) => event.raw,
  requestStreamUsage: (_body, raw) => ({ body: raw, added: false }),
  requestBody: 'json',
  cache: { kind: 'messages', allowed: () => true },
  billing: 'tokens',
};

function withoutNulls(object: JsonObject): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (value !== null && value !== undefined) result[key] = value;
  return result;
}
