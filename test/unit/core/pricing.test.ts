import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bundled from '../../../lambda/pricing/prices.json';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import { nanosToUsd, toRates, type TokenRates } from '../../../lambda/pricing/price-table';
import type { Usage } from '../../../lambda/providers/usage';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

/** Pico-dollars per token from USD per million tokens, written out by hand. */
const pico = (usdPerMillion: number) => Math.round(usdPerMillion * 1e6);

const table = loadPriceTable();

describe('bundled prices', () => {
  const spec46 = [
    'claude-opus-4-6',
    'claude-sonnet-4-6',
    'claude-haiku-4-5-20251001',
    'gpt-4o',
    'gpt-4o-mini',
    'gpt-4-turbo',
    'gpt-3.5-turbo',
    'o1',
    'o3-mini',
    'gemini-2.0-flash',
    'gemini-2.5-pro',
    'gemini-2.5-flash',
    'gemini-1.5-pro',
    'gemini-1.5-flash',
  ];
  const defaultDE = ['mistral-small-latest', 'mistral-large-latest', 'llama-3.3-70b-versatile', 'llama-3.1-8b-instant'];

  it.each([...spec46, ...defaultDE])('%s is priced', (model) => {
    const rates = table.ratesFor(model);
    expect(rates).toBeDefined();
    expect(rates!.input).toBeGreaterThan(0);
    expect(rates!.output).toBeGreaterThan(0);
    const cost = table.cost(model, usage(1000, 1000));
    expect(cost.priced).toBe(true);
    expect(cost.nanos).toBeGreaterThan(0);
  });

  it('every bundled rate converts to a whole number of pico-dollars per token', () => {
    for (const [model, entry] of Object.entries((bundled as { models: Record<string, Parameters<typeof toRates>[0]> }).models)) {
      const rates = toRates(entry);
      for (const value of Object.values(rates)) {
        // Embedding models generate nothing: their output rate is 0 on purpose.
        const free = value === 0 && model.includes('embed') && entry.output === 0;
        expect({ model, integer: Number.isSafeInteger(value), positive: value > 0 || free }).toEqual({ model, integer: true, positive: true });
      }
    }
  });
});

describe('longest-prefix matching', () => {
  const cases: [string, string][] = [
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4o-2024-05-13', 'gpt-4o-2024-05-13'],
    ['o1-mini', 'o1-mini'],
    ['o1-mini-2024-09-12', 'o1-mini'],
    ['o1-2024-12-17', 'o1'],
    ['o3-mini-2025-01-31', 'o3-mini'],
    ['claude-haiku-4-5-20251001', 'claude-haiku-4-5'],
    ['claude-sonnet-4-6', 'claude-sonnet-4-6'],
    ['gemini-2.5-flash-lite', 'gemini-2.5-flash-lite'],
    ['gemini-2.5-flash-preview-05-20', 'gemini-2.5-flash'],
    ['gemini-1.5-flash-8b', 'gemini-1.5-flash-8b'],
    ['models/gemini-2.0-flash', 'gemini-2.0-flash'],
    ['GPT-4o-Mini', 'gpt-4o-mini'],
    ['mistral-small-latest', 'mistral-small'],
    ['mistral-large-latest', 'mistral-large'],
  ];
  const entries = (bundled as { models: Record<string, Parameters<typeof toRates>[0]> }).models;

  it.each(cases)('%s is priced as %s', (model, entry) => {
    expect(table.ratesFor(model)).toEqual(toRates(entries[entry]));
  });

  it('a dated gpt-4o-mini is not priced as gpt-4o, and o1-mini not as o1', () => {
    expect(table.ratesFor('gpt-4o-mini-2024-07-18')).not.toEqual(table.ratesFor('gpt-4o'));
    expect(table.ratesFor('o1-mini')).not.toEqual(table.ratesFor('o1'));
    expect(table.ratesFor('gpt-4o-2024-05-13')).toEqual<TokenRates>({ input: pico(5), output: pico(15), cacheRead: pico(5), cacheWrite: pico(5) });
  });

  it.each(['unknown-model', 'gpt', 'claude', '', 'xgpt-4o'])('unknown model %p costs 0 and is marked unpriced', (model) => {
    expect(table.cost(model, usage(1000, 1000))).toEqual({ nanos: 0, priced: false });
  });

  it('no model at all costs 0, unpriced', () => {
    expect(table.cost(undefined, usage(5, 5))).toEqual({ nanos: 0, priced: false });
  });
});

describe('integer money', () => {
  it('1,000,000 output tokens of gpt-4o-mini cost exactly 600,000,000 nanos', () => {
    expect(table.cost('gpt-4o-mini', usage(0, 1_000_000))).toEqual({ nanos: 600_000_000, priced: true });
    expect(nanosToUsd(600_000_000)).toBe(0.6);
  });

  it('cache read and write tokens use their own rates (messages style)', () => {
    // 1000 input of which 600 cache reads and 300 cache writes; 50 output, claude-sonnet-4-6 ($3 / $15 / read $0.30 / write $3.75).
    const expectedPico = 100 * pico(3) + 600 * pico(0.3) + 300 * pico(3.75) + 50 * pico(15);
    expect(expectedPico).toBe(2_355_000_000);
    expect(table.cost('claude-sonnet-4-6', usage(1000, 50, 600, 300))).toEqual({ nanos: 2_355_000, priced: true });
  });

  it('cached input of a chat model is charged at its cache-read rate (gpt-4o)', () => {
    // prov-b/cached.json: 2406 prompt tokens, 2048 cached, 120 completion.
    expect(table.cost('gpt-4o-2024-08-06', usage(2406, 120, 2048))).toEqual({ nanos: (358 * 2_500_000 + 2048 * 1_250_000 + 120 * 10_000_000) / 1000, priced: true });
  });

  it('without a cache-read rate, cached tokens cost what input costs', () => {
    expect(table.cost('gpt-4-turbo', usage(100, 0, 40))).toEqual(table.cost('gpt-4-turbo', usage(100, 0)));
  });

  it('many small costs add up to the exact integer sum (no float drift)', () => {
    let total = 0;
    for (let i = 0; i < 10_000; i++) {
      const { nanos } = table.cost('gpt-4o-mini', usage(7, 3));
      expect(Number.isInteger(nanos)).toBe(true);
      total += nanos;
    }
    // 7 × 150,000 + 3 × 600,000 pico = 2,850 nanos each.
    expect(total).toBe(28_500_000);
    let floatDollars = 0;
    for (let i = 0; i < 10_000; i++) floatDollars += 7 * 0.15e-6 + 3 * 0.6e-6;
    // The naive float sum drifts; the integer one does not (this documents why integers are used).
    expect(floatDollars === 0.0285).toBe(false);
    expect(nanosToUsd(total)).toBe(0.0285);
  });

  it('every cost is a whole number of nanos for odd token counts and fractional rates', () => {
    for (const model of ['gemini-1.5-flash-8b', 'gemini-1.5-flash', 'claude-3-5-haiku', 'llama-3.1-8b-instant']) {
      for (const tokens of [1, 3, 7, 999, 123_457]) {
        const { nanos } = table.cost(model, usage(tokens, tokens, Math.floor(tokens / 3), Math.floor(tokens / 5)));
        expect(Number.isSafeInteger(nanos)).toBe(true);
      }
    }
  });
});

describe('PRICING_FILE', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pricing-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('the project format adds and overrides prices, keeping the rest', () => {
    const path = write(
      'project.json',
      JSON.stringify({ models: { 'my-local-model': { input: 1, output: 2 }, 'gpt-4o-mini': { input: 0.2, output: 0.8, cache_read: 0.1 } } }),
    );
    const custom = loadPriceTable(path);
    expect(custom.ratesFor('my-local-model-7b')).toEqual({ input: pico(1), output: pico(2), cacheRead: pico(1), cacheWrite: pico(1) });
    expect(custom.ratesFor('gpt-4o-mini-2024-07-18')).toEqual({ input: pico(0.2), output: pico(0.8), cacheRead: pico(0.1), cacheWrite: pico(0.2) });
    expect(custom.ratesFor('gpt-4o')).toEqual(table.ratesFor('gpt-4o'));
  });

  it("LiteLLM's format (USD per token, provider-prefixed keys) adds and overrides prices", () => {
    const litellm = {
      sample_spec: { max_tokens: 'set to max_output_tokens if provider specifies it', input_cost_per_token: 0, output_cost_per_token: 0, litellm_provider: 'one of https://docs.litellm.ai/docs/providers', mode: 'one of chat, embedding' },
      'groq/llama-x': { input_cost_per_token: 2e-7, output_cost_per_token: 4e-7, litellm_provider: 'groq', mode: 'chat' },
      'claude-sonnet-4-6': {
        input_cost_per_token: 4e-6,
        output_cost_per_token: 2e-5,
        cache_read_input_token_cost: 4e-7,
        cache_creation_input_token_cost: 5e-6,
        litellm_provider: 'anthropic',
        mode: 'chat',
      },
      'text-embedding-3-small': { input_cost_per_token: 2e-8, litellm_provider: 'openai', mode: 'embedding' },
      'dall-e-3': { input_cost_per_pixel: 1e-8, litellm_provider: 'openai', mode: 'image_generation' },
    };
    const custom = loadPriceTable(write('litellm.json', JSON.stringify(litellm)));
    expect(custom.ratesFor('llama-x')).toEqual({ input: 200_000, output: 400_000, cacheRead: 200_000, cacheWrite: 200_000 });
    expect(custom.ratesFor('claude-sonnet-4-6')).toEqual({ input: 4_000_000, output: 20_000_000, cacheRead: 400_000, cacheWrite: 5_000_000 });
    expect(custom.cost('llama-x', usage(1_000_000, 1_000_000))).toEqual({ nanos: 600_000_000, priced: true });
    // An embedding entry has no output price: it generates nothing, so output is 0.
    expect(custom.ratesFor('text-embedding-3-small')).toEqual({ input: 20_000, output: 0, cacheRead: 20_000, cacheWrite: 20_000 });
    expect(custom.ratesFor('dall-e-3')).toBeUndefined();
    expect(custom.ratesFor('gpt-4o-mini')).toEqual(table.ratesFor('gpt-4o-mini'));
  });

  const malformed: [string, string][] = [
    ['not JSON at all', '{ "models": { oops'],
    ['a JSON array', '[1, 2, 3]'],
    ['JSON null', 'null'],
    ['a number', '42'],
    ['models that is not an object', '{"models": 5}'],
    ['a project entry without an input price', '{"models": {"m": {"output": 1}}}'],
    ['a project entry with a non-numeric price', '{"models": {"m": {"input": "cheap", "output": 1}}}'],
  ];

  it.each(malformed)('a file that is %s fails with an error naming PRICING_FILE', (_title, content) => {
    const path = write(`bad-${_title.replace(/\W+/g, '-')}.json`, content);
    expect(() => loadPriceTable(path)).toThrow(/PRICING_FILE/);
  });

  it('a missing file fails loudly', () => {
    expect(() => loadPriceTable(join(dir, 'does-not-exist.json'))).toThrow();
  });
});
