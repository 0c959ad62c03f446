import OpenAI from 'openai';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { leaveStreamEarly } from '../support/cut-off-stream';

/**
 * Estimates are kept apart in the stats: a cut-off stream's row (`usage_estimated`) counts in the
 * totals, as in its budget, and `GET /api/stats` says how much of them is estimated
 * (`estimated_requests`, `estimated_input_tokens`, `estimated_output_tokens`, `estimated_cost_usd`)
 * in every breakdown, so the exact part is the total minus the estimated one.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const USAGE = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };

type Totals = Record<string, number>;

it('an aborted stream and a complete answer: the stats say which part is estimated', async () => {
  const account = await proxy.createAccount('estimated-stats');
  await proxy.saveKey(account.token, 'prov-b');
  const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: account.token, maxRetries: 0 });

  proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

  await leaveStreamEarly(proxy.fakes.fakes['prov-b'], client, USAGE);

  const rows = await proxy.waitForRows(account.token, 2);
  const estimated = rows.find((row) => row.usage_estimated === true)!;
  const exact = rows.find((row) => row.usage_estimated === undefined)!;
  expect(estimated).toBeDefined();
  expect(exact).toMatchObject({ input_tokens: 1000, output_tokens: 500 });

  const stats = (await (await proxy.api('/api/stats', { token: account.token })).json()) as {
    totals: Totals;
    by_model: Totals[];
    by_day: Totals[];
  };
  const costNanos = (exact.cost_nanos as number) + (estimated.cost_nanos as number);
  expect(stats.totals).toMatchObject({
    requests: 2,
    cost_nanos: costNanos,
    input_tokens: 1000 + (estimated.input_tokens as number),
    estimated_requests: 1,
    estimated_input_tokens: estimated.input_tokens,
    estimated_output_tokens: estimated.output_tokens,
    estimated_cost_nanos: estimated.cost_nanos,
    estimated_cost_usd: (estimated.cost_nanos as number) / 1e9,
  });
  // The exact part is what remains.
  expect(stats.totals.cost_nanos - stats.totals.estimated_cost_nanos).toBe(exact.cost_nanos);
  expect(stats.by_model[0]).toMatchObject({ estimated_requests: 1, estimated_cost_nanos: estimated.cost_nanos });
  expect(stats.by_day.reduce((sum, day) => sum + day.estimated_requests, 0)).toBe(1);
});
