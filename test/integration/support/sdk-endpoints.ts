import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { expectedEndpointUsage } from '../../fixtures/index';
import type { ProxyServer } from '../../support/proxy-server';

/** The official SDKs pointed at the proxy `proxy()` returns, each call labelled with its own requester. */
export function sdkEndpoints(proxy: () => ProxyServer) {
  const requester = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

  async function rowOf(user: string): Promise<Record<string, unknown>> {
    const rows = await proxy().waitForRows(proxy().account.token, 1, `requester=${encodeURIComponent(user)}`);
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  function openai(
    user: string,
    provider = 'prov-b',
    extra: Record<string, string> = {},
    apiKey = proxy().account.token,
  ): OpenAI {
    return new OpenAI({
      baseURL: `${proxy().proxyBase}/${provider}/v1`,
      apiKey,
      maxRetries: 0,
      defaultHeaders: { 'x-proxy-user': user, ...extra },
    });
  }

  function anthropic(user: string): Anthropic {
    return new Anthropic({
      baseURL: proxy().proxyBase,
      apiKey: proxy().account.token,
      maxRetries: 0,
      defaultHeaders: { 'x-proxy-user': user },
    });
  }

  return { requester, rowOf, openai, anthropic };
}

/** USD per million tokens of gpt-4.1 in the bundled price file, written out to check it. */
export const GPT_41 = { input: 2, cacheRead: 0.5, output: 8 };
export const RESPONSES = expectedEndpointUsage('openai-responses.json');
// 116 uncached input tokens, 1920 cached ones at the cache-read rate, 187 output tokens (128 of them reasoning, not added again).
export const RESPONSES_COST =
  ((RESPONSES.inputTokens - RESPONSES.cacheReadTokens) * GPT_41.input +
    RESPONSES.cacheReadTokens * GPT_41.cacheRead +
    RESPONSES.outputTokens * GPT_41.output) /
  1e6;
export const RESPONSES_TEXT =
  'In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool.';

export const responsesRow = (user: string, stream: boolean, mode = 'stored') => ({
  provider: 'prov-b',
  kind: 'responses',
  model: 'gpt-4.1-2025-04-14',
  input_tokens: 2036,
  output_tokens: 187,
  cache_read_tokens: 1920,
  cache_write_tokens: 0,
  status_code: 200,
  stream,
  cached: false,
  priced: true,
  requester: user,
  mode,
});
