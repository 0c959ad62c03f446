import Anthropic from '@anthropic-ai/sdk';
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { bedrockClient } from '../support/bedrock';
import { eventually } from '../support/patience';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';

/**
 * Account prices (docs/usage-and-pricing.md, "Account prices"): a model id or pattern priced per
 * token or "as" a catalogued model, through `PUT /api/prices/{model}`. A row priced so says
 * `price_source: "custom"`, its budget counts that cost, and the 402 for an unpriced model under a
 * budget no longer happens for it. Exact ids beat patterns, the longest pattern wins, and an account's
 * price overrides the built-in one for that account only.
 */
const FINE_TUNED = 'ft:gpt-4o:acme::abc123';
const PROFILE_ARN = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6';
const USAGE = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

async function account(name: string, budgetUsd?: number): Promise<Account> {
  const made = await proxy.createAccount(name);
  await proxy.saveKey(made.token, 'prov-a');
  await proxy.saveKey(made.token, 'prov-b');
  if (budgetUsd !== undefined) {
    const response = await proxy.api(`/api/tokens/${made.tokenId}/budget`, {
      method: 'PUT',
      token: made.token,
      body: { limit_usd: budgetUsd, period: 'total' },
    });
    expect(response.status).toBe(200);
  }
  return made;
}

async function setPrice(token: string, model: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await proxy.api(`/api/prices/${encodeURIComponent(model)}`, { method: 'PUT', token, body });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

const openai = (token: string) => new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: token, maxRetries: 0 });

async function chatRow(token: string, model: string): Promise<Record<string, unknown>> {
  proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
  const answer = await openai(token)
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  return (await proxy.rowsFor(token, [answer.response.headers.get('x-proxy-request-id')!]))[0];
}

async function tokenSpent(made: Account): Promise<number | undefined> {
  return eventually(async () => {
    const listed = (await (await proxy.api('/api/tokens', { token: made.token })).json()) as {
      tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
    };
    const spent = listed.tokens.find((t) => t.token_id === made.tokenId)?.budget?.spent_usd;
    return spent ? spent : undefined;
  });
}

describe('account prices through the SDKs', () => {
  it('OpenAI fine-tuned id priced per token: passes its budget, the row says custom, the budget counts it', async () => {
    const made = await account('prices-openai', 10);
    expect(await setPrice(made.token, FINE_TUNED, { input: 2, output: 6 })).toMatchObject({
      model: FINE_TUNED,
      input: 2,
      output: 6,
    });
    const row = await chatRow(made.token, FINE_TUNED);
    // 1,000 in at $2/M and 500 out at $6/M.
    expect(row).toMatchObject({ status_code: 200, priced: true, price_source: 'custom', cost_nanos: 5_000_000 });
    expect(await tokenSpent(made)).toBe(0.005);
  });

  it('a pattern priced as a catalogued model; an exact id beats it and the longest pattern wins', async () => {
    const made = await account('prices-patterns');
    await setPrice(made.token, 'ft:*', { input: 100, output: 100 });
    await setPrice(made.token, 'FT:gpt-4o:acme:*', { priced_as: 'gpt-4o' });
    await setPrice(made.token, 'ft:gpt-4o:acme::exact1', { input: 1, output: 1 });
    // gpt-4o: $2.50/M in, $10/M out.
    expect(await chatRow(made.token, 'ft:gpt-4o:acme::other9')).toMatchObject({
      price_source: 'custom',
      cost_nanos: 7_500_000,
    });
    expect(await chatRow(made.token, 'ft:gpt-4o:acme::exact1')).toMatchObject({ cost_nanos: 1_500_000 });
    expect(await chatRow(made.token, 'ft:gpt-4o-mini:other::x')).toMatchObject({ cost_nanos: 150_000_000 });

    const listed = (await (await proxy.api('/api/prices', { token: made.token })).json()) as {
      prices: Array<Record<string, unknown>>;
    };
    // Sorted by model, kept lower-case.
    expect(listed.prices.map((p) => p.model)).toEqual(['ft:*', 'ft:gpt-4o:acme:*', 'ft:gpt-4o:acme::exact1']);
    expect(listed.prices[1]).toMatchObject({ priced_as: 'gpt-4o' });
  });

  it('overrides the built-in price for this account only; deleting it brings the built-in one back', async () => {
    const own = await account('prices-override');
    const other = await account('prices-other');
    await setPrice(own.token, 'gpt-4o-mini', { input: 1, output: 1 });
    expect(await chatRow(own.token, 'gpt-4o-mini')).toMatchObject({ price_source: 'custom', cost_nanos: 1_500_000 });
    // gpt-4o-mini's list price: $0.15/M in, $0.60/M out.
    const builtIn = await chatRow(other.token, 'gpt-4o-mini');
    expect(builtIn).toMatchObject({ cost_nanos: 450_000 });
    expect(builtIn.price_source).toMatch(/^genai-prices@/);

    expect((await proxy.api('/api/prices/gpt-4o-mini', { method: 'DELETE', token: own.token })).status).toBe(204);
    expect((await chatRow(own.token, 'gpt-4o-mini')).cost_nanos).toBe(450_000);
    expect((await proxy.api('/api/prices/gpt-4o-mini', { method: 'DELETE', token: own.token })).status).toBe(404);
  });

  it('Anthropic: a house model priced per token with cache rates passes an Anthropic budget', async () => {
    const made = await account('prices-anthropic', 10);
    await setPrice(made.token, 'claude-house-*', { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 });
    proxy.fakes.fakes['prov-a'].next({ usage: USAGE });
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: made.token, maxRetries: 0 });
    const answer = await client.messages
      .create({ model: 'claude-house-finetune', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const row = (await proxy.rowsFor(made.token, [answer.response.headers.get('x-proxy-request-id')!]))[0];
    // 1,000 in at $3/M and 500 out at $15/M.
    expect(row).toMatchObject({ status_code: 200, price_source: 'custom', cost_nanos: 10_500_000 });
    expect(await tokenSpent(made)).toBe(0.0105);
  });

  it('Bedrock application inference profile ARN through the AWS SDK, under a budget', async () => {
    const made = await account('prices-bedrock', 10);
    await setPrice(made.token, PROFILE_ARN, { input: 4, output: 20 });
    proxy.fakes.bedrock.next({ usage: { input: 1000, output: 500, cacheRead: 0, cacheWrite: 0 } });
    const client = bedrockClient(proxy.proxyBase, made.token);
    await client.send(
      new ConverseCommand({ modelId: PROFILE_ARN, messages: [{ role: 'user', content: [{ text: 'x' }] }] }),
    );
    const [row] = await proxy.waitForRows(made.token, 1);
    // 1,000 in at $4/M and 500 out at $20/M.
    expect(row).toMatchObject({ model: PROFILE_ARN, status_code: 200, price_source: 'custom', cost_nanos: 14_000_000 });
    expect(await tokenSpent(made)).toBe(0.014);
  });

  it('a budget that runs out refuses the custom-priced model like any priced one', async () => {
    const made = await account('prices-exhausted', 0.004);
    await setPrice(made.token, FINE_TUNED, { input: 2, output: 6 });
    await chatRow(made.token, FINE_TUNED);
    await tokenSpent(made);
    const refused = await openai(made.token)
      .chat.completions.create({ model: FINE_TUNED, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    expect(refused?.status).toBe(402);
    expect(refused?.code).not.toBe('model_not_priced');
  });

  it('the 402 for an unpriced model names the route that prices it', async () => {
    const made = await account('prices-refusal', 10);
    const refused = await openai(made.token)
      .chat.completions.create({ model: FINE_TUNED, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    expect(refused?.code).toBe('model_not_priced');
    expect(refused?.message).toContain(`"${FINE_TUNED}" has no price`);
    expect(refused?.message).toContain(`PUT /api/prices/${encodeURIComponent(FINE_TUNED)}`);
  });
});
