/**
 * The frameworks people build on, pointed at the proxy with their documented
 * base-URL setting: the Vercel AI SDK (`@ai-sdk/openai` uses the Responses API
 * by default; `@ai-sdk/anthropic` the messages API) and LangChain JS, each
 * one-shot and streamed, each with its exact row.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const user = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;
const RESPONSES_TEXT = 'In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool.';

async function rowOf(requester: string): Promise<Record<string, unknown>> {
  const rows = await proxy.waitForRows(proxy.account.token, 1, `requester=${encodeURIComponent(requester)}`);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** What the fake reported for its last request: the row must equal it to the token. */
function lastSent(provider: 'prov-a' | 'prov-b') {
  const request = proxy.fakes.fakes[provider].requests.at(-1)!;
  return { path: request.path, usage: request.response.usage! };
}

const responsesRow = {
  provider: 'prov-b',
  kind: 'responses',
  model: 'gpt-4.1-2025-04-14',
  input_tokens: 2036,
  output_tokens: 187,
  cache_read_tokens: 1920,
  priced: true,
  status_code: 200,
};
const responsesCost = ((2036 - 1920) * 2 + 1920 * 0.5 + 187 * 8) / 1e6;

const CLIENT = join(__dirname, 'support', 'framework-client.mjs');

/** One call through a framework, in its own Node process (the frameworks are ES modules only). */
async function run(
  scenario: string,
  requester: string,
): Promise<{ text: string; usage?: { inputTokens?: number; outputTokens?: number } }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [CLIENT, scenario, proxy.proxyBase, proxy.account.token, requester],
    { timeout: 30_000 },
  );
  return JSON.parse(stdout);
}

describe('Vercel AI SDK', () => {
  it.each([false, true])('@ai-sdk/openai goes through the Responses API (stream %s)', async (stream) => {
    const requester = user(`ai-openai-${stream}`);
    const result = await run(`ai-openai:${stream ? 'stream' : 'json'}`, requester);
    expect(result.text).toBe(RESPONSES_TEXT);
    expect(result.usage).toMatchObject({ inputTokens: 2036, outputTokens: 187 });
    expect(lastSent('prov-b').path).toBe('/v1/responses');
    const row = await rowOf(requester);
    expect(row).toMatchObject({ ...responsesRow, stream });
    expect(row.cost_usd).toBeCloseTo(responsesCost, 9);
  });

  it.each([false, true])('@ai-sdk/anthropic (stream %s)', async (stream) => {
    const requester = user(`ai-anthropic-${stream}`);
    const result = await run(`ai-anthropic:${stream ? 'stream' : 'json'}`, requester);
    expect(result.text.length).toBeGreaterThan(0);
    const sent = lastSent('prov-a');
    expect(sent.path).toBe('/v1/messages');
    expect(result.usage).toMatchObject({ inputTokens: sent.usage.inputTokens, outputTokens: sent.usage.outputTokens });
    const row = await rowOf(requester);
    expect(row).toMatchObject({
      provider: 'prov-a',
      kind: 'messages',
      model: 'claude-sonnet-4-6',
      stream,
      input_tokens: sent.usage.inputTokens,
      output_tokens: sent.usage.outputTokens,
      status_code: 200,
    });
    expect(row.cost_usd).toBeCloseTo((sent.usage.inputTokens * 3 + sent.usage.outputTokens * 15) / 1e6, 9);
  });
});

describe('LangChain JS', () => {
  it.each([false, true])('@langchain/openai ChatOpenAI (stream %s)', async (stream) => {
    const requester = user(`lc-openai-${stream}`);
    const result = await run(`lc-openai:${stream ? 'stream' : 'json'}`, requester);
    expect(result.text.length).toBeGreaterThan(0);
    const sent = lastSent('prov-b');
    expect(sent.path).toBe('/v1/chat/completions');
    const row = await rowOf(requester);
    expect(row).toMatchObject({
      provider: 'prov-b',
      kind: 'chat',
      model: 'gpt-4o-mini',
      stream,
      input_tokens: sent.usage.inputTokens,
      output_tokens: sent.usage.outputTokens,
      status_code: 200,
    });
    expect(row.cost_usd).toBeCloseTo((sent.usage.inputTokens * 0.15 + sent.usage.outputTokens * 0.6) / 1e6, 9);
  });

  it.each([false, true])('@langchain/openai with useResponsesApi (stream %s)', async (stream) => {
    const requester = user(`lc-responses-${stream}`);
    const result = await run(`lc-openai-responses:${stream ? 'stream' : 'json'}`, requester);
    expect(result.text).toBe(RESPONSES_TEXT);
    expect(lastSent('prov-b').path).toBe('/v1/responses');
    expect(await rowOf(requester)).toMatchObject({ ...responsesRow, stream });
  });

  it.each([false, true])('@langchain/anthropic ChatAnthropic (stream %s)', async (stream) => {
    const requester = user(`lc-anthropic-${stream}`);
    const result = await run(`lc-anthropic:${stream ? 'stream' : 'json'}`, requester);
    expect(result.text.length).toBeGreaterThan(0);
    const sent = lastSent('prov-a');
    expect(sent.path).toBe('/v1/messages');
    const row = await rowOf(requester);
    expect(row).toMatchObject({
      provider: 'prov-a',
      kind: 'messages',
      model: 'claude-sonnet-4-6',
      stream,
      input_tokens: sent.usage.inputTokens,
      output_tokens: sent.usage.outputTokens,
      status_code: 200,
    });
    expect(row.cost_usd).toBeCloseTo((sent.usage.inputTokens * 3 + sent.usage.outputTokens * 15) / 1e6, 9);
  });
});
