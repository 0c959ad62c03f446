import { calcPrice, extractUsage, findProvider } from '@pydantic/genai-prices';
import catalog from '../../../lambda/pricing/catalog.json';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { fixtureJson } from '../../fixtures/index';

/**
 * Server-side tool calls are charged as the price data's own usage extraction and calculator
 * charge them: the proxy's reading of an Anthropic answer gives, in integer nano-dollars, what
 * `calcPrice(extractUsage(…))` gives, for every Anthropic model the data prices web searches for.
 */
const table = loadPriceTable();
const anthropic = findProvider({ providerId: 'anthropic' })!;

interface Model {
  id: string;
  prices: Record<string, unknown> | Array<{ prices: Record<string, unknown> }>;
}
const searchPriced = (catalog as unknown as { providers: Record<string, Model[]> }).providers.anthropic!.filter(
  (model) =>
    (Array.isArray(model.prices) ? model.prices.map((period) => period.prices) : [model.prices]).some(
      (prices) => 'web_searches_kcount' in prices,
    ),
);

function bodyFor(model: string, searches: number, fetches = 0) {
  const body = structuredClone(fixtureJson('prov-a/web-search.json')) as {
    model: string;
    usage: Record<string, unknown>;
  };
  body.model = model;
  body.usage.server_tool_use = { web_search_requests: searches, web_fetch_requests: fetches };
  return body;
}

const packageNanos = (body: unknown, model: string) => {
  const { usage } = extractUsage(anthropic, body);
  return Math.round(calcPrice(usage, model, { providerId: 'anthropic' })!.total_price * 1e9);
};

const proxyNanos = (body: unknown, model: string) =>
  table.cost(model, messagesDialect.readResponse(body).usage!, { provider: 'prov-a' }).nanos;

describe('server-side tool charges', () => {
  it('the data prices web searches for Anthropic models, and says where the usage reports them', () => {
    expect(searchPriced.length).toBeGreaterThan(5);
    expect((catalog as { server_tool_counters: unknown }).server_tool_counters).toEqual({
      anthropic: { web_search_requests: 'web_searches' },
    });
  });

  it('claude-sonnet-4-6 with 3 web searches: $0.0045 of tokens and $0.03 of searches', () => {
    const body = bodyFor('claude-sonnet-4-6', 3);
    expect(messagesDialect.readResponse(body).usage?.serverToolUse).toEqual({ web_search_requests: 3 });
    expect(proxyNanos(body, 'claude-sonnet-4-6')).toBe(34_500_000);
    expect(packageNanos(body, 'claude-sonnet-4-6')).toBe(34_500_000);
  });

  it.each(searchPriced.map((model) => model.id))('%s: the same cost as genai-prices, searches included', (id) => {
    for (const searches of [0, 1, 7, 1234]) {
      const body = bodyFor(id, searches, 2);
      expect(proxyNanos(body, id)).toBe(packageNanos(body, id));
    }
  });

  it('a counter the data has no price for (web fetches) is kept on the usage but costs nothing', () => {
    const withFetches = bodyFor('claude-sonnet-4-6', 0, 5);
    expect(messagesDialect.readResponse(withFetches).usage?.serverToolUse).toEqual({ web_fetch_requests: 5 });
    expect(proxyNanos(withFetches, 'claude-sonnet-4-6')).toBe(4_500_000);
  });
});
