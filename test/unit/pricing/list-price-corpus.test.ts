import corpus from '../../fixtures/pricing/list-price-corpus.json';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import type { Usage } from '../../../lambda/providers/usage';

/**
 * Every case of the corpus, priced by the proxy, matches the providers' list
 * price to 1e-9 USD: text and embedding models of all five providers, cache
 * reads, 5-minute and 1-hour cache writes, and long-context tiers.
 */
interface CorpusCase {
  provider: string;
  model: string;
  case: string;
  usage: { input: number; output: number; cache_read: number; cache_write: number; cache_write_1h: number };
  expected_usd: string;
  source: string;
}

const table = loadPriceTable();
const cases = (corpus as { cases: CorpusCase[] }).cases;

const toUsage = (u: CorpusCase['usage']): Usage => ({
  inputTokens: u.input,
  outputTokens: u.output,
  cacheReadTokens: u.cache_read,
  cacheWriteTokens: u.cache_write,
  cacheWrite1hTokens: u.cache_write_1h,
});

describe('the list-price corpus', () => {
  it('covers all five providers, embeddings, cache reads, both cache-write lifetimes and long context', () => {
    expect(new Set(cases.map((c) => c.provider))).toEqual(new Set(['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e']));
    for (const kind of [
      'embedding input',
      'cache read',
      '5-minute cache write',
      '5-minute and 1-hour cache writes with a read',
      'long context (above 200k input tokens)',
    ]) {
      expect(cases.some((c) => c.case === kind)).toBe(true);
    }
  });

  it.each(cases.map((c) => [`${c.provider} ${c.model}: ${c.case}`, c] as const))('%s', (_name, c) => {
    const cost = table.cost(c.model, toUsage(c.usage), { provider: c.provider });
    expect(cost.priced).toBe(true);
    expect(cost.source).toMatch(/^genai-prices@|^project corrections$/);
    const expectedNanos = Number(c.expected_usd) * 1e9;
    expect(Math.abs(cost.nanos - expectedNanos)).toBeLessThanOrEqual(1);
    expect(Math.abs(cost.nanos / 1e9 - Number(c.expected_usd))).toBeLessThanOrEqual(1e-9);
  });
});
