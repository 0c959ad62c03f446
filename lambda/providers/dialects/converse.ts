import { asObject, tryParseJson, type JsonObject } from '../../base/json';
import { encodeEventStreamMessage } from '../../eventstream/event-stream-decoder';
import type { Dialect, StreamEvent, StreamOutcome } from '../types';
import { tokenCount, type Usage } from '../usage';
import { awsErrorBody, awsErrorHeaders } from './aws-errors';
import { findErrorMessage } from './error-text';
import { bedrockUsageFromHeaders } from './bedrock-headers';
import { deliveredChars } from './delivered-text';
import { validateWith } from './validation';
import * as z from 'zod/mini';

/** Converse bodies: only the shape the proxy relies on is checked; the model is in the path. */
const converseBodySchema = z.looseObject({
  messages: z.optional(z.array(z.unknown())),
  system: z.optional(z.array(z.unknown())),
});

/**
 * Converse `usage` (also the stream's `metadata` event): `inputTokens` leaves out the tokens read
 * from or written to the prompt cache, which a row's `input_tokens` includes (kept apart as well).
 */
export function converseUsage(usage: JsonObject): Usage {
  const cacheReadTokens = tokenCount(usage.cacheReadInputTokens);
  const cacheWriteTokens = tokenCount(usage.cacheWriteInputTokens);
  return {
    inputTokens: tokenCount(usage.inputTokens) + cacheReadTokens + cacheWriteTokens,
    outputTokens: tokenCount(usage.outputTokens),
    cacheReadTokens,
    cacheWriteTokens,
  };
}

/** The error an exception message of an AWS event stream reports. */
export function streamExceptionMessage(event: StreamEvent): string {
  return `${event.exception}: ${findErrorMessage(tryParseJson(event.data)) ?? 'stream error'}`;
}

/** An exception frame in the stream's own format, which the AWS SDK raises as that exception. */
export function awsStreamError(message: string): Buffer {
  return encodeEventStreamMessage({ exception: 'internalServerException' }, { message });
}

/**
 * Bedrock's Converse API (`/model/{modelId}/converse` and `/converse-stream`): one body shape for
 * every model, usage in `usage` or the stream's closing `metadata` event. The same dialect serves
 * both endpoints: each answers in one form only (JSON or an event stream), and both share one cache
 * kind, so a stored answer serves either (docs/caching.md).
 */
export const converseDialect: Dialect = {
  name: 'converse',
  // The AWS SDKs send a Bedrock API key as a Bearer token; `x-api-key` is accepted too.
  credential: { header: 'authorization', scheme: 'Bearer', alsoAccepted: { header: 'x-api-key' } },
  forwardedHeaderPrefix: 'x-amzn-bedrock-',
  validate: (body) => validateWith(converseBodySchema, body, false),
  errorBody: awsErrorBody,
  errorHeaders: awsErrorHeaders,
  upstreamErrorMessage: findErrorMessage,

  readResponse(body) {
    const usage = asObject(asObject(body)?.usage);
    return { usage: usage && converseUsage(usage) };
  },
  usageFromHeaders: bedrockUsageFromHeaders,

  newStreamReader() {
    let usage: Usage | undefined;
    let error: string | undefined;
    let complete = false;
    let answerEnded = false;
    let delivered = 0;
    return {
      onEvent(event) {
        if (event.exception) error = streamExceptionMessage(event);
        else if (event.event === 'contentBlockDelta') delivered += deliveredChars(event.data);
        // The stop reason ends the answer; the usage comes after it, in `metadata`.
        else if (event.event === 'messageStop') answerEnded = true;
        else if (event.event === 'metadata') {
          const fields = asObject(asObject(tryParseJson(event.data))?.usage);
          if (fields) usage = converseUsage(fields);
          complete = true;
        }
      },
      outcome: (): StreamOutcome => ({
        usage,
        error,
        complete: complete && !error,
        answerEnded,
        deliveredChars: delivered,
      }),
    };
  },

  streamErrorEvent: (message) => awsStreamError(message),
  withoutAddedUsage: (event) => event.raw,
  requestStreamUsage: (_body, raw) => ({ body: raw, added: false }),
  requestBody: 'json',
  cache: { kind: 'converse', allowed: () => true },
  billing: 'tokens',
};
