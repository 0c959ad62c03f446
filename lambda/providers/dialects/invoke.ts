import { asObject, asString, tryParseJson, type JsonObject } from '../../base/json';
import type { Dialect, StreamOutcome } from '../types';
import { tokenCount, type Usage } from '../usage';
import { bedrockUsageFromHeaders } from './bedrock-headers';
import { awsStreamError, converseDialect, streamExceptionMessage } from './converse';
import { messagesDialect } from './messages';

/** What Bedrock adds to a stream's last chunk: the call's token counts, whatever the model family. */
const METRICS_FIELD = 'amazon-bedrock-invocationMetrics';

function metricsUsage(metrics: JsonObject): Usage {
  const cacheReadTokens = tokenCount(metrics.cacheReadInputTokenCount);
  const cacheWriteTokens = tokenCount(metrics.cacheWriteInputTokenCount);
  return {
    inputTokens: tokenCount(metrics.inputTokenCount) + cacheReadTokens + cacheWriteTokens,
    outputTokens: tokenCount(metrics.outputTokenCount),
    cacheReadTokens,
    cacheWriteTokens,
  };
}

/** A model-native body reports usage in Anthropic's shape (`usage.input_tokens`, cache reads and writes included). */
function anthropicUsage(body: unknown): Usage | undefined {
  const usage = asObject(asObject(body)?.usage);
  return usage && ('input_tokens' in usage || 'output_tokens' in usage)
    ? messagesDialect.readResponse(body).usage
    : undefined;
}

/**
 * Bedrock's InvokeModel (`/model/{modelId}/invoke`, `/invoke-with-response-stream`): the body is the
 * model family's own. Usage comes from the body where the family reports it (Anthropic's messages,
 * with prompt-cache reads and writes), else from Bedrock's token-count headers; in a stream, each
 * `chunk` event carries one model-native event (base64 in `bytes`), Anthropic's read as its own
 * stream, and the last chunk Bedrock's `amazon-bedrock-invocationMetrics`.
 * The row's model is the path's (the body names none, or another spelling of it).
 */
export const invokeDialect: Dialect = {
  ...converseDialect,
  name: 'invoke',
  // InvokeModel's body is a blob to the AWS SDK: without a `contentType` it goes as bytes.
  jsonLabels: /^application\/octet-stream\b/i,
  validate: (body) =>
    asObject(body) ? { ok: true } : { ok: false, param: '', message: 'The request body must be a JSON object.' },

  readResponse: (body) => ({ usage: anthropicUsage(body) }),
  usageFromHeaders: bedrockUsageFromHeaders,

  newStreamReader() {
    const anthropic = messagesDialect.newStreamReader();
    let metrics: Usage | undefined;
    let error: string | undefined;
    return {
      onEvent(event) {
        if (event.exception) {
          error = streamExceptionMessage(event);
          return;
        }
        if (event.event !== 'chunk') return;
        const bytes = asString(asObject(tryParseJson(event.data))?.bytes);
        const chunk =
          bytes === undefined ? undefined : asObject(tryParseJson(Buffer.from(bytes, 'base64').toString('utf8')));
        if (!chunk) return;
        const type = asString(chunk.type);
        if (type) anthropic.onEvent({ event: type, data: JSON.stringify(chunk) });
        const invocation = asObject(chunk[METRICS_FIELD]);
        if (invocation) metrics = metricsUsage(invocation);
      },
      outcome(): StreamOutcome {
        const own = anthropic.outcome();
        // Anthropic's own usage keeps cache reads and writes apart; the metrics are the fallback for every other family.
        return {
          usage: own.usage ?? metrics,
          error: error ?? own.error,
          complete: (metrics !== undefined || own.complete) && !error && !own.error,
          deliveredChars: own.deliveredChars,
        };
      },
    };
  },

  streamErrorEvent: (message) => awsStreamError(message),
  cache: { kind: 'invoke', allowed: () => true },
};
