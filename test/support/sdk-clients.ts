import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ProviderId } from '../fakes/start-fakes';

export const TEST_MODELS: Record<ProviderId, string> = {
  'prov-a': 'claude-sonnet-4-6',
  'prov-b': 'gpt-4o-mini-2024-07-18',
  'prov-c': 'gemini-2.0-flash',
  'prov-d': 'mistral-small-latest',
  'prov-e': 'llama-3.3-70b-versatile',
};

/** USD per million tokens for TEST_MODELS, written out here so the test checks the bundled price data. */
export const TEST_PRICES: Record<ProviderId, { input: number; output: number; cacheRead: number; cacheWrite: number }> =
  {
    'prov-a': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    'prov-b': { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0.15 },
    'prov-c': { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0.1 },
    'prov-d': { input: 0.1, output: 0.3, cacheRead: 0.1, cacheWrite: 0.1 },
    'prov-e': { input: 0.59, output: 0.79, cacheRead: 0.59, cacheWrite: 0.59 },
  };

export interface CallOptions {
  proxyBase: string;
  provider: ProviderId;
  /** The proxy token (stored mode) … */
  token: string;
  /** … or, for pass-through, the client's own provider key. */
  providerKey?: string;
  stream: boolean;
  headers?: Record<string, string>;
  messages?: Array<{ role: 'user' | 'assistant'; content: string }>;
  maxRetries?: number;
}

export interface CallResult {
  text: string;
  model: string;
  /** Chat completions: the token counts the answer reported (a stream's from its chunks); undefined when it reported none. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  requestId: string;
  headers: Headers;
}

const DEFAULT_MESSAGES = [{ role: 'user' as const, content: 'Say hello.' }];

/** One request through the official SDK of the provider's API style, pointed at the proxy. */
export async function callThroughSdk(options: CallOptions): Promise<CallResult> {
  const credential = options.providerKey ?? options.token;
  const headers = { ...(options.providerKey ? { 'x-proxy-token': options.token } : {}), ...options.headers };
  const messages = options.messages ?? DEFAULT_MESSAGES;
  const model = TEST_MODELS[options.provider];
  if (options.provider === 'prov-a') {
    const client = new Anthropic({
      baseURL: options.proxyBase,
      apiKey: credential,
      defaultHeaders: headers,
      maxRetries: options.maxRetries ?? 0,
    });
    if (options.stream) {
      const { data, response } = await client.messages
        .create({ model, max_tokens: 64, messages, stream: true })
        .withResponse();
      let text = '';
      let seenModel = '';
      for await (const event of data) {
        if (event.type === 'message_start') seenModel = event.message.model;
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
      return {
        text,
        model: seenModel,
        requestId: response.headers.get('x-proxy-request-id')!,
        headers: response.headers,
      };
    }
    const { data, response } = await client.messages.create({ model, max_tokens: 64, messages }).withResponse();
    const text = data.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return {
      text,
      model: data.model,
      requestId: response.headers.get('x-proxy-request-id')!,
      headers: response.headers,
    };
  }
  const client = new OpenAI({
    baseURL: `${options.proxyBase}/${options.provider}/v1`,
    apiKey: credential,
    defaultHeaders: headers,
    maxRetries: options.maxRetries ?? 0,
  });
  if (options.stream) {
    const { data, response } = await client.chat.completions
      .create({ model, max_tokens: 64, messages, stream: true })
      .withResponse();
    let text = '';
    let seenModel = '';
    let usage: CallResult['usage'];
    for await (const chunk of data) {
      seenModel ||= chunk.model;
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = tokenCounts(chunk.usage);
    }
    return {
      text,
      model: seenModel,
      usage,
      requestId: response.headers.get('x-proxy-request-id')!,
      headers: response.headers,
    };
  }
  const { data, response } = await client.chat.completions.create({ model, max_tokens: 64, messages }).withResponse();
  return {
    text: data.choices[0]?.message?.content ?? '',
    model: data.model,
    usage: data.usage && tokenCounts(data.usage),
    requestId: response.headers.get('x-proxy-request-id')!,
    headers: response.headers,
  };
}

const tokenCounts = ({ prompt_tokens, completion_tokens }: OpenAI.CompletionUsage) => ({
  prompt_tokens,
  completion_tokens,
});

/** Expected cost in USD of a usage under TEST_PRICES (input includes cache reads and writes). */
export function expectedCostUsd(
  provider: ProviderId,
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
): number {
  const p = TEST_PRICES[provider];
  const plainInput = usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens;
  return (
    (plainInput * p.input +
      usage.cacheReadTokens * p.cacheRead +
      usage.cacheWriteTokens * p.cacheWrite +
      usage.outputTokens * p.output) /
    1e6
  );
}
