import type { Usage } from '../usage';
import { tokenCount } from '../usage';

type Headers = Record<string, string | string[] | undefined>;

const count = (headers: Headers, name: string) => tokenCount(Number(headers[name]));

/**
 * Bedrock's token-count headers, sent with every InvokeModel and Converse answer. Like Converse's
 * `inputTokens`, the input count leaves out prompt-cache reads and writes, which have headers of their own.
 */
export function bedrockUsageFromHeaders(headers: Headers): Usage | undefined {
  if (
    headers['x-amzn-bedrock-input-token-count'] === undefined &&
    headers['x-amzn-bedrock-output-token-count'] === undefined
  )
    return undefined;
  const cacheReadTokens = count(headers, 'x-amzn-bedrock-cache-read-input-token-count');
  const cacheWriteTokens = count(headers, 'x-amzn-bedrock-cache-write-input-token-count');
  return {
    inputTokens: count(headers, 'x-amzn-bedrock-input-token-count') + cacheReadTokens + cacheWriteTokens,
    outputTokens: count(headers, 'x-amzn-bedrock-output-token-count'),
    cacheReadTokens,
    cacheWriteTokens,
  };
}
