import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import { nanosToUsd, PriceTable } from '../../../lambda/pricing/price-table';
import type { Usage } from '../../../lambda/providers/usage';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});
const table = loadPriceTable();
const BUILT_IN = /^genai-prices@\d+\.\d+\.\d+$/;

describe('looking prices up with the provider that served the request', () => {
  it("an id that is not a model's own id is not swallowed by a shorter one", () => {
    // Longest-prefix matching priced these as gpt-5, gpt-4 and gpt-5 at a fraction of their price.
    expect(table.cost('gpt-5.2-2025-12-11', usage(1_000_000, 0), { provider: 'prov-b' }).nanos).toBe(1_750_000_000);
    expect(table.cost('gpt-4.5-preview', usage(1_000_000, 0), { provider: 'prov-b' }).nanos).toBe(75_000_000_000);
    expect(table.cost('gpt-5-pro', usage(0, 1_000_000), { provider: 'prov-b' }).nanos).toBe(120_000_000_000);
    expect(table.cost('gpt-5-unknown-variant', usage(1000, 1000), { provider: 'prov-b' })).toEqual({
      nanos: 0,
      priced: false,
    });
  });

  it('the same id is priced by the provider that served it, or not at all', () => {
    expect(table.cost('claude-sonnet-4-5-20250929', usage(1000, 0), { provider: 'prov-a' }).priced).toBe(true);
    expect(table.cost('claude-sonnet-4-5-20250929', usage(1000, 0), { provider: 'prov-e' }).priced).toBe(false);
    expect(table.cost('gpt-4o', usage(1000, 0), { provider: 'prov-x' }).priced).toBe(false);
  });

  it("dated ids in either spelling, and Gemini's `models/` prefix", () => {
    const a = table.cost('claude-haiku-4-5-20251001', usage(1000, 1000), { provider: 'prov-a' });
    expect(a).toEqual({ nanos: 6_000_000, priced: true, source: expect.stringMatching(BUILT_IN) });
    expect(table.cost('models/gemini-2.5-flash', usage(1000, 1000), { provider: 'prov-c' }).nanos).toBe(2_800_000);
    // Listed as gpt-4o-mini-2024-07-18 only: the compact spelling is tried dashed.
    expect(table.cost('gpt-4o-mini-20240718', usage(1000, 1000), { provider: 'prov-b' }).nanos).toBe(750_000);
  });

  it('a price that changed on a date is applied by the request time', () => {
    // o3 was cut from 10/40 to 2/8 on 2025-06-10.
    expect(
      table.cost('o3', usage(1_000_000, 0), { provider: 'prov-b', at: Date.parse('2025-06-01T00:00:00Z') }).nanos,
    ).toBe(10_000_000_000);
    expect(
      table.cost('o3', usage(1_000_000, 0), { provider: 'prov-b', at: Date.parse('2025-07-01T00:00:00Z') }).nanos,
    ).toBe(2_000_000_000);
  });

  it('an unpriced model is a row with priced: false and no source, never a failure', () => {
    expect(table.cost('my-own-finetune', usage(10, 10), { provider: 'prov-d' })).toEqual({ nanos: 0, priced: false });
    expect(table.cost(undefined, usage(10, 10), { provider: 'prov-d' })).toEqual({ nanos: 0, priced: false });
  });

  // USD per million tokens in the bundled genai-prices AWS entries for Claude Sonnet 4.6, written out:
  // in-region ids and geographic profiles (`eu.`, `us.`) at its regional rates, `global.` at the global ones.
  const SONNET_46_REGIONAL = { input: 3.3, output: 16.5, cacheRead: 0.33, cacheWrite: 4.125 };
  const SONNET_46_GLOBAL = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
  it.each([
    ['eu.anthropic.claude-sonnet-4-6', SONNET_46_REGIONAL],
    ['global.anthropic.claude-sonnet-4-6', SONNET_46_GLOBAL],
    ['us.anthropic.claude-sonnet-4-6', SONNET_46_REGIONAL],
    ['anthropic.claude-sonnet-4-6', SONNET_46_REGIONAL],
    ['anthropic.claude-sonnet-4-6-v1:0', SONNET_46_REGIONAL],
    ['arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6', SONNET_46_REGIONAL],
  ])('Bedrock %s is priced exactly, each token class at its own rate', (model, rates) => {
    const M = 1_000_000;
    const cost = (u: Usage) => table.cost(model, u, { provider: 'bedrock' });
    expect(cost(usage(M, 0))).toEqual({
      nanos: Math.round(rates.input * 1e9),
      priced: true,
      source: expect.stringMatching(BUILT_IN),
    });
    expect(cost(usage(0, M)).nanos).toBe(Math.round(rates.output * 1e9));
    // A row's input includes its cache reads and writes, which are priced at their own rates.
    expect(cost(usage(M, 0, M, 0)).nanos).toBe(Math.round(rates.cacheRead * 1e9));
    expect(cost(usage(M, 0, 0, M)).nanos).toBe(Math.round(rates.cacheWrite * 1e9));
    expect(cost(usage(3 * M, 2 * M, M / 2, M / 4)).nanos).toBe(
      Math.round((2.25 * rates.input + 2 * rates.output + 0.5 * rates.cacheRead + 0.25 * rates.cacheWrite) * 1e9),
    );
  });

  it.each(['eu.anthropic.claude-sonnet-9-9', 'global.example.unknown-model', 'acme.private-model-v1:0'])(
    'Bedrock %s, a model the price source lacks, is unpriced, never $0',
    (model) => {
      expect(table.cost(model, usage(1000, 1000), { provider: 'bedrock' })).toEqual({ nanos: 0, priced: false });
    },
  );

  it('lookups are remembered per (provider, model)', () => {
    let lookups = 0;
    const counting = new PriceTable((provider) => {
      lookups++;
      return provider === 'prov-b' ? 'openai' : undefined;
    });
    for (let i = 0; i < 50; i++) counting.cost('gpt-4o-mini', usage(10, 10), { provider: 'prov-b' });
    expect(lookups).toBe(1);
    counting.cost('gpt-4o-mini', usage(10, 10), { provider: 'prov-c' });
    expect(lookups).toBe(2);
    for (let i = 0; i < 10_000; i++) counting.cost(`unknown-${i}`, usage(1, 1), { provider: 'prov-b' });
    // Bounded: a flood of distinct ids does not grow memory without end.
    expect((counting as unknown as { memo: Map<string, unknown> }).memo.size).toBeLessThanOrEqual(4_096);
  });
});

describe('integer money', () => {
  it('many small costs add up to the exact integer sum (no float drift)', () => {
    let total = 0;
    for (let i = 0; i < 10_000; i++) {
      const { nanos } = table.cost('gpt-4o-mini', usage(7, 3), { provider: 'prov-b' });
      expect(Number.isInteger(nanos)).toBe(true);
      total += nanos;
    }
    // 7 × 150,000 + 3 × 600,000 pico = 2,850 nanos each.
    expect(total).toBe(28_500_000);
    let floatDollars = 0;
    for (let i = 0; i < 10_000; i++) floatDollars += 7 * 0.15e-6 + 3 * 0.6e-6;
    expect(floatDollars === 0.0285).toBe(false);
    expect(nanosToUsd(total)).toBe(0.0285);
  });

  it('huge requests at the highest rates stay exact', () => {
    // o1-pro: 150 / 600 USD per million tokens.
    expect(table.cost('o1-pro', usage(10_000_000, 10_000_000), { provider: 'prov-b' }).nanos).toBe(7_500_000_000_000);
  });
});

describe('PRICING_FILE', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pricing-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };

  it('the project format adds and overrides prices for every provider or one, with tiers and 1-hour writes; the rest stays built in', () => {
    const custom = loadPriceTable(
      write('project.json', {
        models: {
          'my-local-model': { input: 1, output: 2 },
          'gpt-4o-mini': { input: 0.2, output: 0.8, cache_read: 0.1 },
        },
        providers: {
          'prov-a': {
            'claude-haiku-4-5': {
              input: 1,
              output: 5,
              cache_read: 0.1,
              cache_write: 1.25,
              cache_write_1h: 2,
              tiers: [{ above_input_tokens: 100_000, input: 2, output: 10 }],
            },
          },
        },
      }),
    );
    const ctx = (provider: string) => ({ provider });
    expect(custom.cost('my-local-model-7b', usage(1_000_000, 1_000_000), ctx('prov-e'))).toEqual({
      nanos: 3_000_000_000,
      priced: true,
      source: 'PRICING_FILE',
    });
    expect(custom.cost('my-local-model.v2', usage(1, 1), ctx('prov-e')).priced).toBe(false);
    expect(custom.cost('gpt-4o-mini-2024-07-18', usage(1_000_000, 0, 500_000), ctx('prov-b')).nanos).toBe(150_000_000);
    expect(custom.cost('gpt-4o', usage(1000, 0), ctx('prov-b'))).toEqual(
      table.cost('gpt-4o', usage(1000, 0), ctx('prov-b')),
    );
    const haiku = custom.cost(
      'claude-haiku-4-5-20251001',
      { inputTokens: 10_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 10_000, cacheWrite1hTokens: 4_000 },
      ctx('prov-a'),
    );
    expect(haiku.nanos).toBe(6_000 * 1_250 + 4_000 * 2_000);
    expect(custom.cost('claude-haiku-4-5', usage(200_000, 1_000_000), ctx('prov-a')).nanos).toBe(
      400_000_000 + 10_000_000_000,
    );
    expect(custom.cost('claude-haiku-4-5', usage(1000, 0), ctx('prov-b')).priced).toBe(false);
  });

  it("LiteLLM's format: a provider's own rows, preferred over unprefixed ones; other platforms' rows ignored", () => {
    const custom = loadPriceTable(
      write('litellm.json', {
        sample_spec: {
          input_cost_per_token: 0,
          output_cost_per_token: 0,
          litellm_provider: 'one of https://docs.litellm.ai/docs/providers',
          mode: 'one of chat, embedding',
        },
        'gemini-2.5-pro': {
          input_cost_per_token: 9e-6,
          output_cost_per_token: 9e-5,
          litellm_provider: 'vertex_ai-language-models',
          mode: 'chat',
        },
        'gemini/gemini-2.5-pro': {
          input_cost_per_token: 1.25e-6,
          input_cost_per_token_above_200k_tokens: 2.5e-6,
          output_cost_per_token: 1e-5,
          output_cost_per_token_above_200k_tokens: 1.5e-5,
          cache_read_input_token_cost: 1.25e-7,
          litellm_provider: 'gemini',
          mode: 'chat',
        },
        'mistral-large-latest': {
          input_cost_per_token: 9e-6,
          output_cost_per_token: 9e-6,
          litellm_provider: 'mistral',
          mode: 'chat',
        },
        'mistral/mistral-large-latest': {
          input_cost_per_token: 5e-7,
          output_cost_per_token: 1.5e-6,
          litellm_provider: 'mistral',
          mode: 'chat',
        },
        'groq/llama-x': {
          input_cost_per_token: 2e-7,
          output_cost_per_token: 4e-7,
          litellm_provider: 'groq',
          mode: 'chat',
        },
        'bedrock/anthropic.claude-sonnet-4-6': {
          input_cost_per_token: 9e-6,
          output_cost_per_token: 9e-5,
          litellm_provider: 'bedrock',
          mode: 'chat',
        },
        'claude-sonnet-4-6': {
          input_cost_per_token: 4e-6,
          output_cost_per_token: 2e-5,
          cache_read_input_token_cost: 4e-7,
          cache_creation_input_token_cost: 5e-6,
          cache_creation_input_token_cost_above_1hr: 8e-6,
          litellm_provider: 'anthropic',
          mode: 'chat',
        },
        'text-embedding-3-small': { input_cost_per_token: 3e-8, litellm_provider: 'openai', mode: 'embedding' },
        'dall-e-3': { input_cost_per_pixel: 1e-8, litellm_provider: 'openai', mode: 'image_generation' },
      }),
    );
    const file = { priced: true, source: 'PRICING_FILE' };
    expect(custom.cost('gemini-2.5-pro', usage(100_000, 0), { provider: 'prov-c' })).toEqual({
      nanos: 125_000_000,
      ...file,
    });
    expect(custom.cost('gemini-2.5-pro', usage(300_000, 0), { provider: 'prov-c' }).nanos).toBe(750_000_000);
    expect(custom.cost('mistral-large-latest', usage(1_000_000, 0), { provider: 'prov-d' }).nanos).toBe(500_000_000);
    expect(custom.cost('llama-x', usage(1_000_000, 1_000_000), { provider: 'prov-e' })).toEqual({
      nanos: 600_000_000,
      ...file,
    });
    // LiteLLM keys are exact ids: no prefix matching.
    expect(custom.cost('llama-x-preview', usage(1, 1), { provider: 'prov-e' }).priced).toBe(false);
    const claude = custom.cost(
      'claude-sonnet-4-6',
      { inputTokens: 10_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 10_000, cacheWrite1hTokens: 4_000 },
      { provider: 'prov-a' },
    );
    expect(claude.nanos).toBe(6_000 * 5_000 + 4_000 * 8_000);
    expect(custom.cost('text-embedding-3-small', usage(1_000_000, 0), { provider: 'prov-b' }).nanos).toBe(30_000_000);
    // Bedrock's row is not Anthropic's price, and never reaches another provider.
    expect(custom.cost('anthropic.claude-sonnet-4-6', usage(1000, 0), { provider: 'prov-a' }).priced).toBe(false);
    expect(custom.cost('dall-e-3', usage(1000, 0), { provider: 'prov-b' }).priced).toBe(false);
    expect(custom.cost('gpt-4o-mini', usage(1000, 0), { provider: 'prov-b' })).toEqual(
      table.cost('gpt-4o-mini', usage(1000, 0), { provider: 'prov-b' }),
    );
  });

  const malformed: [string, string][] = [
    ['not JSON at all', '{ "models": { oops'],
    ['a JSON array', '[1, 2, 3]'],
    ['JSON null', 'null'],
    ['a number', '42'],
    ['models that is not an object', '{"models": 5}'],
    ['a project entry without an input price', '{"models": {"m": {"output": 1}}}'],
    ['a project entry with a non-numeric price', '{"models": {"m": {"input": "cheap", "output": 1}}}'],
    ['an unknown provider', '{"providers": {"prov-z": {"m": {"input": 1, "output": 1}}}}'],
  ];

  it.each(malformed)('a file that is %s fails with an error naming PRICING_FILE', (title, content) => {
    expect(() => loadPriceTable(write(`bad-${title.replace(/\W+/g, '-')}.json`, content))).toThrow(/PRICING_FILE/);
  });

  it('a missing file fails loudly', () => {
    expect(() => loadPriceTable(join(dir, 'does-not-exist.json'))).toThrow(/PRICING_FILE/);
  });
});
