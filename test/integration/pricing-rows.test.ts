import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/** Rows carry exact integer cost and where the price came from, through the official SDKs. */
let proxy: ProxyServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pricing-rows-'));
  const pricingFile = join(dir, 'prices.json');
  writeFileSync(
    pricingFile,
    JSON.stringify({ providers: { 'prov-d': { 'my-mistral-finetune': { input: 2, output: 6 } } } }),
  );
  proxy = await startProxy({ env: { PRICING_FILE: pricingFile } });
});
afterAll(async () => {
  await proxy.stop();
  rmSync(dir, { recursive: true, force: true });
});

const rowOf = async (requestId: string) => (await proxy.rowsFor(proxy.account.token, [requestId]))[0];

describe('priced rows', () => {
  it('an Anthropic answer with 5-minute and 1-hour cache writes: each at its own rate, source named', async () => {
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-a'].next({ fixture: 'prov-a/prompt-cache-1h.json' });
    const { data, response } = await client.messages
      .create({
        model: 'claude-haiku-4-5-20251001',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'read the cache' }],
      })
      .withResponse();
    expect(data.usage.cache_creation?.ephemeral_1h_input_tokens).toBe(2000);
    const row = await rowOf(response.headers.get('x-proxy-request-id')!);
    // Haiku 4.5 list prices (USD per million): input 1, 5-minute write 1.25, 1-hour write 2, read 0.1, output 5.
    // 40 × 1 + 1000 × 1.25 + 2000 × 2 + 5000 × 0.1 + 120 × 5 = 6390 → $0.00639
    expect(row).toMatchObject({
      input_tokens: 8040,
      cache_write_tokens: 3000,
      cache_read_tokens: 5000,
      output_tokens: 120,
      cost_nanos: 6_390_000,
      priced: true,
    });
    expect(row.price_source).toMatch(/^genai-prices@\d+\.\d+\.\d+$/);
  });

  it('a model priced by PRICING_FILE says so; an unknown model is a row with priced: false', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-d/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    const usage = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };
    proxy.fakes.fakes['prov-d'].next({ usage });
    const own = await client.chat.completions
      .create({ model: 'my-mistral-finetune', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(await rowOf(own.response.headers.get('x-proxy-request-id')!)).toMatchObject({
      cost_nanos: 5_000_000,
      priced: true,
      price_source: 'PRICING_FILE',
    });

    proxy.fakes.fakes['prov-d'].next({ usage });
    const unknown = await client.chat.completions
      .create({ model: 'nobody-knows-this-model', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const row = await rowOf(unknown.response.headers.get('x-proxy-request-id')!);
    expect(row).toMatchObject({
      input_tokens: 1000,
      output_tokens: 500,
      cost_nanos: 0,
      priced: false,
      status_code: 200,
    });
    expect(row).not.toHaveProperty('price_source');
  });

  it('an embedding model is priced from the built-in data', async () => {
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: proxy.account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-b'].next({
      usage: { inputTokens: 50_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const { response } = await client.chat.completions
      .create({ model: 'text-embedding-3-large', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    // text-embedding-3-large: 0.13 USD per million input tokens.
    expect(await rowOf(response.headers.get('x-proxy-request-id')!)).toMatchObject({
      cost_nanos: 6_500_000,
      priced: true,
    });
  });
});
