import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * Requests that ask something different never share a cache entry, even with the
 * same model and messages: the system prompt, tools and output format are part of the key.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const cacheOn = { headers: { 'x-proxy-cache': 'true' } };
const unique = () => `cache key ${randomBytes(6).toString('hex')}`;
const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 });

describe('the cache key through the official SDKs', () => {
  it('two messages requests that differ only in `system` get their own answers; the same system again hits', async () => {
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 });
    const fake = proxy.fakes.fakes['prov-a'];
    const messages = [{ role: 'user' as const, content: unique() }];
    const ask = (system: string) => client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages }, cacheOn).withResponse();

    fake.next({ usage: usage(111) });
    const pirate = await ask('You are a pirate.');
    fake.next({ usage: usage(222) });
    const french = await ask('Answer only in French.');
    expect(pirate.response.headers.get('x-proxy-cache')).toBe('MISS');
    expect(french.response.headers.get('x-proxy-cache')).toBe('MISS');
    // Each got the answer the provider gave to its own question.
    expect(pirate.data.usage.input_tokens).toBe(111);
    expect(french.data.usage.input_tokens).toBe(222);

    const calls = fake.requests.length;
    const again = await ask('You are a pirate.');
    expect(again.response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(again.data.usage.input_tokens).toBe(111);
    const frenchAgain = await ask('Answer only in French.');
    expect(frenchAgain.response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(frenchAgain.data.usage.input_tokens).toBe(222);
    expect(fake.requests.length).toBe(calls);
  });

  it('chat requests that differ only in `tools`, `tool_choice` or `response_format` miss; a different temperature or max_tokens hits', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: unique() }];
    const base = { model: 'gpt-4o-mini', messages };
    const tool = { type: 'function' as const, function: { name: 'weather', parameters: { type: 'object', properties: {} } } };
    const status = async (body: Record<string, unknown>) =>
      (await client.chat.completions.create({ ...base, ...body } as OpenAI.ChatCompletionCreateParamsNonStreaming, cacheOn).withResponse()).response.headers.get('x-proxy-cache');

    expect(await status({})).toBe('MISS');
    expect(await status({ tools: [tool] })).toBe('MISS');
    expect(await status({ tools: [tool], tool_choice: 'required' })).toBe('MISS');
    expect(await status({ response_format: { type: 'json_object' } })).toBe('MISS');
    expect(await status({ temperature: 0.2, max_tokens: 5, seed: 9, user: 'alice', metadata: { a: 'b' } })).toBe('HIT');
    expect(await status({ tools: [tool], top_p: 0.5 })).toBe('HIT');
  });
});
