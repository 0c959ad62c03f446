import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callThroughSdk, TEST_MODELS } from '../support/sdk-clients';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls } from '../reliability/support/requests';
import { allRows } from '../reliability/support/rows';
import { eventually } from '../support/patience';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const TINY = 0.000001;

interface BudgetAnswer {
  limit_usd: number;
  period: string;
  spent_usd: number;
  resets_at: string | null;
}

async function setBudget(account: Account, path: string, body: { limit_usd: number; period: string }): Promise<void> {
  const response = await proxy.api(path, { method: 'PUT', token: account.token, body });
  if (response.status !== 200) throw new Error(`budget not set: ${response.status} ${await response.text()}`);
}

async function readBudget(
  account: Account,
  subject: { tokenId: string } | { requester: string },
): Promise<BudgetAnswer | undefined> {
  if ('tokenId' in subject) {
    const body = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
      tokens: Array<{ token_id: string; budget: BudgetAnswer | null }>;
    };
    return body.tokens.find((t) => t.token_id === subject.tokenId)?.budget ?? undefined;
  }
  const body = (await (await proxy.api('/api/budgets', { token: account.token })).json()) as {
    requesters: Array<BudgetAnswer & { requester: string }>;
  };
  return body.requesters.find((r) => r.requester === subject.requester);
}

/** Spend is added just after a row is stored: wait until the budget shows at least `atLeast` dollars. */
async function waitForSpend(
  account: Account,
  subject: { tokenId: string } | { requester: string },
  atLeast = 1e-9,
): Promise<BudgetAnswer> {
  const spent = await eventually(async () => {
    const budget = await readBudget(account, subject);
    return budget && budget.spent_usd >= atLeast ? budget : undefined;
  });
  return spent ?? (await readBudget(account, subject))!;
}

async function budgetedAccount(name: string): Promise<Account> {
  const account = await proxy.createAccount(name);
  await proxy.saveKey(account.token, 'prov-a');
  await proxy.saveKey(account.token, 'prov-b');
  return account;
}

/** Dollars with 6 decimals, rounded down, computed in integer micro-dollars. */
const usdFloor = (usd: number) => {
  const micros = Math.floor(Math.round(usd * 1e9) / 1000);
  return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
};

const nextUtcMidnight = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
};

async function rowOf(account: Account, requestId: string) {
  return eventually(async () => (await allRows(proxy, account.token)).find((r) => r.id === requestId));
}

describe.each([
  ['chat completions', 'prov-b' as ProviderId, false],
  ['chat completions, streamed', 'prov-b' as ProviderId, true],
  ['messages', 'prov-a' as ProviderId, false],
  ['messages, streamed', 'prov-a' as ProviderId, true],
])('a used-up token budget, %s', (_name, provider, stream) => {
  let account: Account;
  beforeAll(async () => {
    account = await budgetedAccount(`spent-${provider}-${stream}`);
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: TINY, period: 'day' });
    // Within the budget (nothing spent yet): forwarded, and the answer says what is left.
    const first = await callThroughSdk({ proxyBase: proxy.proxyBase, provider, token: account.token, stream });
    expect(first.text.length).toBeGreaterThan(0);
    expect(first.headers.get('x-proxy-budget-remaining-usd')).toBe('0.000001');
    const spent = await waitForSpend(account, { tokenId: account.tokenId });
    expect(spent.spent_usd).toBeGreaterThan(TINY);
  });

  it('is refused through the official SDK with a 402 it does not retry, and nothing goes upstream', async () => {
    const before = upstreamCalls(proxy);
    const model = TEST_MODELS[provider];
    const messages = [{ role: 'user' as const, content: 'Spend more.' }];
    // Default retry settings: the SDKs retry 408/409/429/5xx, never 402.
    const error = await (
      provider === 'prov-a'
        ? new Anthropic({ baseURL: proxy.proxyBase, apiKey: account.token }).messages
            .create({ model, max_tokens: 64, messages, stream })
            .then(async (s) => {
              if (stream) for await (const _ of s as AsyncIterable<unknown>);
            })
        : new OpenAI({ baseURL: `${proxy.proxyBase}/${provider}/v1`, apiKey: account.token }).chat.completions
            .create({ model, messages, stream })
            .then(async (s) => {
              if (stream) for await (const _ of s as AsyncIterable<unknown>);
            })
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(provider === 'prov-a' ? Anthropic.APIError : OpenAI.APIError);
    const apiError = error as { status: number; headers: Headers; message: string };
    expect(apiError.status).toBe(402);
    // What docs/budgets.md's example reads: the OpenAI SDK's `code`, the Anthropic SDK's error body type.
    if (provider === 'prov-a')
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'billing_error' },
      });
    else expect(error).toMatchObject({ code: 'budget_exceeded', type: 'insufficient_quota' });
    expect(apiError.headers.get('x-proxy-budget-remaining-usd')).toBe('0.000000');
    expect(apiError.message).toContain(`proxy token ${account.tokenId}`);
    expect(apiError.message).toContain('of its daily budget of $0.000001');
    expect(apiError.message).toContain(`It resets at ${nextUtcMidnight()}`);
    expect(apiError.message).toMatch(/has spent \$0\.\d{6}/);
    expect(upstreamCalls(proxy)).toBe(before);

    // The row is written after the answer has gone out: wait for it.
    await proxy.waitForRows(account.token, 1, 'status=error');
    const rows = await allRows(proxy, account.token, 'status=error');
    const refused = rows.filter((r) => r.status_code === 402);
    // One row: the SDK did not retry.
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      cost_nanos: 0,
      stream,
      provider,
    });
    expect(refused[0].error).toContain('Budget exceeded');
  });

  it('answers in the endpoint’s own error shape, with the remaining budget at 0', async () => {
    const before = upstreamCalls(proxy);
    const result = await callProxy(proxy, { provider, token: account.token, stream });
    expect(result.status).toBe(402);
    expect(result.headers.get('x-proxy-budget-remaining-usd')).toBe('0.000000');
    if (provider === 'prov-a') {
      const body = JSON.parse(result.text);
      expect(Object.keys(body)).toEqual(['type', 'error']);
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('billing_error');
      expect(expectMessagesError(result.text).message).toContain('Budget exceeded');
    } else {
      const error = expectChatError(result.text);
      expect(error).toEqual({
        message: expect.stringContaining('Budget exceeded'),
        type: 'insufficient_quota',
        param: null,
        code: 'budget_exceeded',
      });
    }
    expect(upstreamCalls(proxy)).toBe(before);
    const row = await rowOf(account, result.requestId);
    expect(row).toMatchObject({ status_code: 402, input_tokens: 0, output_tokens: 0, cost_nanos: 0 });
  });
});

describe('budgets on every proxied path', () => {
  it('pass-through requests and cache hits are refused too', async () => {
    const account = await budgetedAccount('pass-through-and-cache');
    const ownKey = 'client-own-key-budget-test-0001';
    proxy.secrets.add(ownKey);
    await callProxy(proxy, { provider: 'prov-b', token: account.token, cache: 'true', prompt: 'cached question' });
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: TINY, period: 'month' });
    await callProxy(proxy, { provider: 'prov-b', token: account.token, providerKey: ownKey, prompt: 'own key' });
    await waitForSpend(account, { tokenId: account.tokenId });
    const before = upstreamCalls(proxy);
    const passThrough = await callProxy(proxy, {
      provider: 'prov-b',
      token: account.token,
      providerKey: ownKey,
      prompt: 'own key again',
    });
    expect(passThrough.status).toBe(402);
    const cached = await callProxy(proxy, {
      provider: 'prov-b',
      token: account.token,
      cache: 'true',
      prompt: 'cached question',
    });
    expect(cached.status).toBe(402);
    expect(cached.headers.get('x-proxy-cache')).toBeNull();
    expect(upstreamCalls(proxy)).toBe(before);
  });

  it('every endpoint kind is refused the same way: Responses API, embeddings, token counting', async () => {
    const account = await budgetedAccount('kinds');
    await setBudget(account, '/api/budgets/requesters/kinds', { limit_usd: TINY, period: 'month' });
    const user = { 'x-proxy-user': 'kinds' };
    expect((await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: user })).status).toBe(200);
    await waitForSpend(account, { requester: 'kinds' });
    const before = upstreamCalls(proxy);
    const openai = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: account.token, defaultHeaders: user });
    const anthropic = new Anthropic({ baseURL: proxy.proxyBase, apiKey: account.token, defaultHeaders: user });
    const refusals = await Promise.all([
      openai.responses.create({ model: 'gpt-4.1-2025-04-14', input: 'hi' }).catch((e: unknown) => e),
      openai.responses.create({ model: 'gpt-4.1-2025-04-14', input: 'hi', stream: true }).catch((e: unknown) => e),
      openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' }).catch((e: unknown) => e),
      anthropic.messages
        .countTokens({ model: TEST_MODELS['prov-a'], messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e),
    ]);
    for (const error of refusals.slice(0, 3)) expect(error).toMatchObject({ status: 402, code: 'budget_exceeded' });
    expect(refusals[3]).toMatchObject({ status: 402, error: { type: 'error', error: { type: 'billing_error' } } });
    for (const error of refusals)
      expect((error as Error).message).toMatch(/Budget exceeded: requester \\?"kinds\\?" has spent/);
    expect(upstreamCalls(proxy)).toBe(before);
  });

  it('an upstream error answer carries the remaining-budget header too; a cache hit adds nothing to the spend', async () => {
    const account = await budgetedAccount('header-everywhere');
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: 5, period: 'total' });
    // A 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
    for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-b'].next({ status: 500 });
    const failed = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-proxy-budget-remaining-usd')).toBe('5.000000');

    const miss = await callProxy(proxy, { provider: 'prov-b', token: account.token, cache: 'true', prompt: 'same' });
    const spent = await waitForSpend(account, { tokenId: account.tokenId });
    const hit = await callProxy(proxy, { provider: 'prov-b', token: account.token, cache: 'true', prompt: 'same' });
    expect(hit.headers.get('x-proxy-cache')).toBe('HIT');
    expect(Number(hit.headers.get('x-proxy-budget-remaining-usd'))).toBeCloseTo(5 - spent.spent_usd, 6);
    // A cache hit spends nothing: once its row is there, the spend is still what the miss made it.
    expect(await rowOf(account, hit.requestId)).toMatchObject({ cached: true });
    expect((await readBudget(account, { tokenId: account.tokenId }))!.spent_usd).toBe(spent.spent_usd);
    const rows = await allRows(proxy, account.token);
    expect(rows.reduce((sum, r) => sum + (r.cost_nanos as number), 0) / 1e9).toBe(spent.spent_usd);
    expect(miss.status).toBe(200);
  });

  it('a request without any budget carries no budget header', async () => {
    const account = await budgetedAccount('no-budget');
    const result = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(result.status).toBe(200);
    expect(result.headers.get('x-proxy-budget-remaining-usd')).toBeNull();
  });
});

describe('token and requester budgets together', () => {
  it('the stricter one wins: a used-up requester is refused while the token still has budget for others', async () => {
    const account = await budgetedAccount('both');
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: 10, period: 'month' });
    await setBudget(account, '/api/budgets/requesters/intern', { limit_usd: TINY, period: 'day' });
    const intern = { 'x-proxy-user': 'intern' };

    const first = await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: intern });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-proxy-budget-remaining-usd')).toBe('0.000001');
    await waitForSpend(account, { requester: 'intern' });

    const before = upstreamCalls(proxy);
    const refused = await callProxy(proxy, { provider: 'prov-a', token: account.token, headers: intern });
    expect(refused.status).toBe(402);
    expect(expectMessagesError(refused.text).message).toContain('requester "intern" has spent');
    expect(upstreamCalls(proxy)).toBe(before);

    // Another requester of the same token: only the token's budget applies, and the header shows what is left of it.
    const tokenSpent = (await waitForSpend(account, { tokenId: account.tokenId })).spent_usd;
    const lead = await callProxy(proxy, {
      provider: 'prov-b',
      token: account.token,
      headers: { 'x-proxy-user': 'lead' },
    });
    expect(lead.status).toBe(200);
    expect(lead.headers.get('x-proxy-budget-remaining-usd')).toBe(usdFloor(10 - tokenSpent));
  });

  it('the stricter one wins the other way round: a used-up token refuses even a requester with budget left', async () => {
    const account = await budgetedAccount('token-stricter');
    await setBudget(account, '/api/budgets/requesters/alice', { limit_usd: 50, period: 'month' });
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: TINY, period: 'total' });
    const alice = { 'x-proxy-user': 'alice' };
    const first = await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: alice });
    expect(first.headers.get('x-proxy-budget-remaining-usd')).toBe('0.000001');
    await waitForSpend(account, { tokenId: account.tokenId });
    const refused = await callProxy(proxy, { provider: 'prov-b', token: account.token, headers: alice });
    expect(refused.status).toBe(402);
    const message = expectChatError(refused.text).message;
    expect(message).toContain(`proxy token ${account.tokenId}`);
    expect(message).toContain('total budget');
    expect(message).toContain('does not reset');
    // Both counted the same request.
    const aliceBudget = await waitForSpend(account, { requester: 'alice' });
    expect(aliceBudget.spent_usd).toBe((await readBudget(account, { tokenId: account.tokenId }))!.spent_usd);
  });

  it('raising or removing a used-up budget lets requests through again', async () => {
    const account = await budgetedAccount('raise');
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: TINY, period: 'day' });
    await callProxy(proxy, { provider: 'prov-b', token: account.token });
    await waitForSpend(account, { tokenId: account.tokenId });
    expect((await callProxy(proxy, { provider: 'prov-b', token: account.token })).status).toBe(402);
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: 1, period: 'day' });
    expect((await callProxy(proxy, { provider: 'prov-b', token: account.token })).status).toBe(200);
    await setBudget(account, `/api/tokens/${account.tokenId}/budget`, { limit_usd: TINY, period: 'day' });
    expect((await callProxy(proxy, { provider: 'prov-b', token: account.token })).status).toBe(402);
    expect(
      (await proxy.api(`/api/tokens/${account.tokenId}/budget`, { method: 'DELETE', token: account.token })).status,
    ).toBe(204);
    const free = await callProxy(proxy, { provider: 'prov-b', token: account.token });
    expect(free.status).toBe(200);
    expect(free.headers.get('x-proxy-budget-remaining-usd')).toBeNull();
  });
});

describe('isolation between accounts', () => {
  it('an account can neither see nor change another account’s budgets, and a requester label is per account', async () => {
    const owner = await budgetedAccount('owner');
    const other = await budgetedAccount('other');
    await setBudget(owner, '/api/budgets/requesters/shared-name', { limit_usd: TINY, period: 'day' });
    await setBudget(owner, `/api/tokens/${owner.tokenId}/budget`, { limit_usd: 7, period: 'month' });
    await callProxy(proxy, { provider: 'prov-b', token: owner.token, headers: { 'x-proxy-user': 'shared-name' } });
    await waitForSpend(owner, { requester: 'shared-name' });
    expect(
      (await callProxy(proxy, { provider: 'prov-b', token: owner.token, headers: { 'x-proxy-user': 'shared-name' } }))
        .status,
    ).toBe(402);

    // The same label in another account has no budget there.
    const theirs = await callProxy(proxy, {
      provider: 'prov-b',
      token: other.token,
      headers: { 'x-proxy-user': 'shared-name' },
    });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('x-proxy-budget-remaining-usd')).toBeNull();
    expect((await (await proxy.api('/api/budgets', { token: other.token })).json()).requesters).toEqual([]);
    const otherTokens = (await (await proxy.api('/api/tokens', { token: other.token })).json()).tokens as Array<{
      token_id: string;
      budget: unknown;
    }>;
    expect(otherTokens.map((t) => t.budget)).toEqual([null]);

    // Another account's token id is "not found", for reading, setting and removing alike.
    const put = await proxy.api(`/api/tokens/${owner.tokenId}/budget`, {
      method: 'PUT',
      token: other.token,
      body: { limit_usd: 1000, period: 'total' },
    });
    expect(put.status).toBe(404);
    expect(
      (await proxy.api(`/api/tokens/${owner.tokenId}/budget`, { method: 'DELETE', token: other.token })).status,
    ).toBe(404);
    expect(
      (await proxy.api('/api/budgets/requesters/shared-name', { method: 'DELETE', token: other.token })).status,
    ).toBe(404);
    expect((await readBudget(owner, { tokenId: owner.tokenId }))!.limit_usd).toBe(7);
    expect((await readBudget(owner, { requester: 'shared-name' }))!.limit_usd).toBe(TINY);
  });
});
