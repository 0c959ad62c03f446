import { calcPrice } from '@pydantic/genai-prices';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import catalog from '../../../lambda/pricing/catalog.json';
import corrections from '../../../lambda/pricing/corrections.json';
import type { MatchRule } from '../../../lambda/pricing/model-match';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import { picoPerToken } from '../../../lambda/pricing/rates';
import { PROVIDERS } from '../../../lambda/providers/registry';
import type { Usage } from '../../../lambda/providers/usage';

/**
 * The bundled price data is the package's, and the proxy's integer arithmetic
 * gives what the package's own calculator gives, for every model of the five
 * providers it lists.
 */
const ROOT = join(__dirname, '../../..');
const table = loadPriceTable();

type Prices = Record<string, number | { base: number; tiers: Array<{ start: number; price: number }> }>;
interface Model {
  id: string;
  match: MatchRule;
  prices: Prices | Array<{ prices: Prices }>;
}
const providers = (catalog as unknown as { providers: Record<string, Model[]> }).providers;
const corrected = new Set(
  Object.values((corrections as unknown as { providers: Record<string, Model[]> }).providers).flatMap((models) =>
    models.map((m) => m.id),
  ),
);

/** An id the rule matches, taken from the rule itself. */
function sampleId(rule: MatchRule): string | undefined {
  if ('equals' in rule) return rule.equals;
  if ('starts_with' in rule) return rule.starts_with;
  if ('ends_with' in rule) return rule.ends_with;
  if ('contains' in rule) return rule.contains;
  if ('or' in rule) return rule.or.map(sampleId).find(Boolean);
  if ('and' in rule) return rule.and.map(sampleId).find(Boolean);
  return undefined;
}

const usages: Array<[string, Usage]> = [
  ['plain', { inputTokens: 1234, outputTokens: 567, cacheReadTokens: 0, cacheWriteTokens: 0 }],
  ['cache read', { inputTokens: 20_000, outputTokens: 300, cacheReadTokens: 15_000, cacheWriteTokens: 0 }],
  [
    '5-minute and 1-hour writes',
    {
      inputTokens: 40_000,
      outputTokens: 900,
      cacheReadTokens: 5_000,
      cacheWriteTokens: 30_000,
      cacheWrite1hTokens: 10_000,
    },
  ],
  [
    'long context',
    {
      inputTokens: 300_000,
      outputTokens: 5_000,
      cacheReadTokens: 100_000,
      cacheWriteTokens: 20_000,
      cacheWrite1hTokens: 5_000,
    },
  ],
];

/** The package's names for the usage fields. */
function packageUsage(usage: Usage, prices: Prices): Record<string, number> {
  const writes = prices.cache_write_mtok !== undefined;
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    ...(writes ? { cache_write_tokens: usage.cacheWriteTokens } : { cache_write_tokens: usage.cacheWriteTokens }),
    ...(prices.cache_write_1h_mtok !== undefined ? { cache_write_1h_tokens: usage.cacheWrite1hTokens ?? 0 } : {}),
  };
}

const cases = PROVIDERS.flatMap((provider) =>
  (providers[provider.prices.catalog] ?? [])
    .filter((model) => !corrected.has(model.id))
    .map((model) => [provider.id, provider.prices.catalog, model] as const),
);

describe('the bundled price data', () => {
  it('is what the installed @pydantic/genai-prices gives for the five providers (re-run scripts/extract-prices.ts after an update)', () => {
    expect(() =>
      execFileSync(
        process.execPath,
        [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'scripts/extract-prices.ts'), '--check'],
        { cwd: ROOT, stdio: 'pipe' },
      ),
    ).not.toThrow();
  });

  it('every price is a whole number of pico-dollars per token', () => {
    const all = Object.values(providers).flatMap((models) =>
      models.flatMap((m) => (Array.isArray(m.prices) ? m.prices.map((p) => p.prices) : [m.prices])),
    );
    for (const prices of all) {
      for (const price of Object.values(prices)) {
        const values = typeof price === 'number' ? [price] : [price.base, ...price.tiers.map((t) => t.price)];
        for (const value of values) expect(Math.abs(picoPerToken(value) - value * 1e6)).toBeLessThan(1e-6);
      }
    }
  });

  it.each(
    cases.map(([provider, catalogId, model]) => [`${provider} ${model.id}`, provider, catalogId, model] as const),
  )('%s: the proxy prices it as the package does, to 1e-9 USD', (_name, provider, catalogId, model) => {
    const id = sampleId(model.match);
    expect(id).toBeDefined();
    const prices = Array.isArray(model.prices) ? model.prices[model.prices.length - 1].prices : model.prices;
    for (const [, usage] of usages) {
      const theirs = calcPrice(packageUsage(usage, prices), id!, { providerId: catalogId });
      expect(theirs?.model.id).toBe(model.id);
      const ours = table.cost(id, usage, { provider });
      expect(ours.priced).toBe(true);
      expect(Math.abs(ours.nanos / 1e9 - theirs!.total_price)).toBeLessThanOrEqual(1e-9 + 1e-12);
    }
  });
});
