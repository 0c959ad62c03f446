import Anthropic from '@anthropic-ai/sdk';
import { calcPrice, extractUsage, findProvider } from '@pydantic/genai-prices';
import { csvRows } from '../support/csv';
import { fixtureJson } from '../fixtures/index';
import { eventually } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * Server-side tool calls reach the row and its cost through the Anthropic SDK: a fake Anthropic answers
 * with `usage.server_tool_use.web_search_requests: 3` as Anthropic does, and the row costs what
 * genai-prices' own `extractUsage` + `calcPrice` say ($10 per 1,000 searches on claude-sonnet-4-6).
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const rowOf = async (token: string, requestId: string) => (await proxy.rowsFor(token, [requestId]))[0]!;

/** $0.0045 of tokens (1,000 in at $3/M, 100 out at $15/M) and $0.03 of searches. */
const EXPECTED_NANOS = 34_500_000;

describe('server-side tool calls are charged', () => {
  it('the reference: genai-prices prices the fixture answer at $0.0345', () => {
    const body = fixtureJson('prov-a/web-search.json');
    const { usage } = extractUsage(findProvider({ providerId: 'anthropic' })!, body);
    expect(usage.web_searches).toBe(3);
    expect(Math.round(calcPrice(usage, 'claude-sonnet-4-6', { providerId: 'anthropic' })!.total_price * 1e9)).toBe(
      EXPECTED_NANOS,
    );
  });

  it.each([
    ['a JSON answer', false],
    ['a stream', true],
  ])('%s with 3 web searches: row counts them and costs $0.0345; a budget spends it', async (_label, stream) => {
    const account = await proxy.createAccount(`searches-${stream}`);
    await proxy.saveKey(account.token, 'prov-a');
    const budget = await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
      method: 'PUT',
      token: account.token,
      body: { limit_usd: 100, period: 'month' },
    });
    expect(budget.status).toBe(200);
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: account.token, maxRetries: 0 });
    proxy.fakes.fakes['prov-a'].next({ fixture: stream ? 'prov-a/web-search.sse' : 'prov-a/web-search.json' });
    const params = {
      model: 'claude-sonnet-4-6',
      max_tokens: 500,
      messages: [{ role: 'user' as const, content: 'search the web for usage proxies' }],
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 5 }],
    };
    let requestId: string;
    if (stream) {
      const messages = client.messages.stream(params);
      const final = await messages.finalMessage();
      expect(final.usage.server_tool_use?.web_search_requests).toBe(3);
      requestId = (await messages.withResponse()).response.headers.get('x-proxy-request-id')!;
    } else {
      const { data, response } = await client.messages.create(params).withResponse();
      expect(data.usage.server_tool_use?.web_search_requests).toBe(3);
      requestId = response.headers.get('x-proxy-request-id')!;
    }

    const row = await rowOf(account.token, requestId);
    expect(row).toMatchObject({
      model: 'claude-sonnet-4-6',
      input_tokens: 1000,
      output_tokens: 100,
      server_tool_use: { web_search_requests: 3 },
      cost_nanos: EXPECTED_NANOS,
      cost_usd: 0.0345,
      priced: true,
    });

    const csv = csvRows(await (await proxy.api('/api/logs.csv', { token: account.token })).text());
    const column = csv[0]!.indexOf('server_tool_use');
    expect(column).toBeGreaterThan(0);
    expect(csv[1]![column]).toBe('web_search_requests=3');
    expect(csv[1]![csv[0]!.indexOf('cost_usd')]).toBe('0.0345');

    const spent = await eventually(async () => {
      const tokens = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
        tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
      };
      const budget = tokens.tokens.find((t) => t.token_id === account.tokenId)?.budget;
      return budget && budget.spent_usd > 0 ? budget.spent_usd : undefined;
    });
    expect(spent).toBe(0.0345);
  });
});
