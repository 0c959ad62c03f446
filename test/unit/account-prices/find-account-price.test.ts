import { findAccountPrice, patternProblem, type AccountPrice } from '../../../lambda/account-prices/account-price';
import { PricedForAccount } from '../../../lambda/account-prices/priced-for-account';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';

const at = '2026-05-01T00:00:00.000Z';
const rates = (model: string, input: number): AccountPrice => ({
  model,
  rates: { input, output: input },
  updated_at: at,
});
const prices = [rates('ft:*', 1), rates('ft:gpt-4o:acme:*', 2), rates('ft:gpt-4o:acme::exact', 3), rates('gpt-4o', 4)];

describe('which account price applies', () => {
  it.each([
    ['ft:gpt-4o:acme::exact', 3],
    ['FT:GPT-4O:ACME::EXACT', 3],
    ['ft:gpt-4o:acme::other', 2],
    ['ft:gpt-4o:acme:', 2],
    ['ft:gpt-4o-mini:x', 1],
    ['gpt-4o', 4],
  ])('%s → the price with input %d', (model, input) => {
    expect(findAccountPrice(prices, model)?.rates?.input).toBe(input);
  });

  it.each(['gpt-4o-mini', 'f', 'my-ft:thing'])('%s: none (an exact id is no prefix)', (model) => {
    expect(findAccountPrice(prices, model)).toBeUndefined();
  });

  it('patterns: one star, at the end, after at least one character', () => {
    expect(patternProblem('ft:gpt-4o:acme:*')).toBeUndefined();
    expect(patternProblem('exact-id')).toBeUndefined();
    expect(patternProblem('*')).toBeDefined();
    expect(patternProblem('ft:*:x')).toBeDefined();
    expect(patternProblem('a**')).toBeDefined();
  });
});

describe('what a model costs for the account', () => {
  const table = loadPriceTable();
  const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const context = { provider: 'prov-b', at: Date.parse(at) };

  it('its own rates, exact in nano-dollars, price_source custom', () => {
    const priced = new PricedForAccount(table, [rates('house-model', 1.25)]);
    expect(priced.cost('house-model', usage, context)).toEqual({
      nanos: 2_500_000_000,
      priced: true,
      source: 'custom',
    });
    expect(priced.has('prov-b', 'house-model')).toBe(true);
  });

  it('priced as a catalogued model: that model’s price, as the provider that served the request has it', () => {
    const asGpt4o: AccountPrice = { model: 'house-*', priced_as: 'gpt-4o', updated_at: at };
    const priced = new PricedForAccount(table, [asGpt4o]);
    const builtIn = table.cost('gpt-4o', usage, context);
    expect(priced.cost('house-1', usage, context)).toEqual({ ...builtIn, source: 'custom' });
    // prov-a (Anthropic) has no gpt-4o: still no price there.
    expect(priced.has('prov-a', 'house-1')).toBe(false);
    expect(priced.cost('house-1', usage, { ...context, provider: 'prov-a' }).priced).toBe(false);
  });

  it('cache reads at their own rate when given, else at the input rate', () => {
    const cached = { ...usage, outputTokens: 0, cacheReadTokens: 400_000 };
    const withRate: AccountPrice = { model: 'm', rates: { input: 1, output: 1, cache_read: 0.1 }, updated_at: at };
    expect(new PricedForAccount(table, [withRate]).cost('m', cached, context).nanos).toBe(640_000_000);
    expect(new PricedForAccount(table, [rates('m', 1)]).cost('m', cached, context).nanos).toBe(1_000_000_000);
  });

  it('other models keep the built-in price', () => {
    const priced = new PricedForAccount(table, [rates('house-model', 1)]);
    expect(priced.cost('gpt-4o-mini', usage, context)).toEqual(table.cost('gpt-4o-mini', usage, context));
  });
});
