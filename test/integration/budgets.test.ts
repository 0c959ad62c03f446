import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

interface BudgetAnswer {
  limit_usd: number;
  period: string;
  spent_usd: number;
  resets_at: string | null;
}

async function putJson(
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await proxy.api(path, { method: 'PUT', token, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

async function tokenBudget(account: Account, tokenId = account.tokenId): Promise<BudgetAnswer | null> {
  const body = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
    tokens: Array<{ token_id: string; budget: BudgetAnswer | null }>;
  };
  return body.tokens.find((t) => t.token_id === tokenId)!.budget;
}

async function requesterBudgets(account: Account): Promise<Array<BudgetAnswer & { requester: string }>> {
  return (
    (await (await proxy.api('/api/budgets', { token: account.token })).json()) as {
      requesters: Array<BudgetAnswer & { requester: string }>;
    }
  ).requesters;
}

const nextUtcMidnight = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
};
const nextUtcMonth = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
};

describe('budget management API', () => {
  it('a token budget is set, shown on GET /api/tokens, changed and removed', async () => {
    const account = await proxy.createAccount('budget-api');
    expect(await tokenBudget(account)).toBeNull();
    const set = await putJson(`/api/tokens/${account.tokenId}/budget`, account.token, {
      limit_usd: 25,
      period: 'month',
    });
    expect(set).toEqual({
      status: 200,
      body: { limit_usd: 25, period: 'month', spent_usd: 0, resets_at: nextUtcMonth(), alert_at: [0.8, 1] },
    });
    expect(await tokenBudget(account)).toEqual(set.body);

    const largest = await putJson(`/api/tokens/${account.tokenId}/budget`, account.token, {
      limit_usd: 1_000_000,
      period: 'month',
    });
    expect(largest.body.limit_usd).toBe(1_000_000);

    const changed = await putJson(`/api/tokens/${account.tokenId}/budget`, account.token, {
      limit_usd: 0.123456,
      period: 'total',
    });
    expect(changed.body).toEqual({
      limit_usd: 0.123456,
      period: 'total',
      spent_usd: 0,
      resets_at: null,
      alert_at: [0.8, 1],
    });
    const daily = await putJson(`/api/tokens/${account.tokenId}/budget`, account.token, {
      limit_usd: 3,
      period: 'day',
    });
    expect(daily.body.resets_at).toBe(nextUtcMidnight());

    expect(
      (await proxy.api(`/api/tokens/${account.tokenId}/budget`, { method: 'DELETE', token: account.token })).status,
    ).toBe(204);
    expect(await tokenBudget(account)).toBeNull();
    expect(
      (await proxy.api(`/api/tokens/${account.tokenId}/budget`, { method: 'DELETE', token: account.token })).status,
    ).toBe(404);
    expect(
      (
        await putJson(`/api/tokens/${account.accountId}_nosuchtoken/budget`, account.token, {
          limit_usd: 1,
          period: 'day',
        })
      ).status,
    ).toBe(404);
  });

  it('requester budgets are set, listed with their spend and removed', async () => {
    const account = await proxy.createAccount('requester-api');
    const label = 'intern/script #1 ü';
    const set = await putJson(`/api/budgets/requesters/${encodeURIComponent(label)}`, account.token, {
      limit_usd: 2.5,
      period: 'day',
    });
    expect(set).toEqual({
      status: 200,
      body: { limit_usd: 2.5, period: 'day', spent_usd: 0, resets_at: nextUtcMidnight(), alert_at: [0.8, 1] },
    });
    await putJson('/api/budgets/requesters/bob', account.token, { limit_usd: 100, period: 'total' });
    expect(await requesterBudgets(account)).toEqual([
      { requester: 'bob', limit_usd: 100, period: 'total', spent_usd: 0, resets_at: null, alert_at: [0.8, 1] },
      { requester: label, ...set.body },
    ]);
    expect((await proxy.api('/api/budgets/requesters/bob', { method: 'DELETE', token: account.token })).status).toBe(
      204,
    );
    expect((await proxy.api('/api/budgets/requesters/bob', { method: 'DELETE', token: account.token })).status).toBe(
      404,
    );
    expect((await requesterBudgets(account)).map((b) => b.requester)).toEqual([label]);
  });

  it.each([
    ['negative', { limit_usd: -1, period: 'day' }, 'limit_usd'],
    ['zero', { limit_usd: 0, period: 'day' }, 'limit_usd'],
    ['NaN as text', { limit_usd: 'NaN', period: 'day' }, 'limit_usd'],
    ['a string amount', { limit_usd: '5', period: 'day' }, 'limit_usd'],
    ['missing', { period: 'day' }, 'limit_usd'],
    ['more than 6 decimals', { limit_usd: 0.0000001, period: 'day' }, 'limit_usd'],
    ['over $1,000,000', { limit_usd: 1_000_000.000001, period: 'day' }, 'limit_usd'],
    ['an unknown period', { limit_usd: 5, period: 'week' }, 'period'],
    ['no period', { limit_usd: 5 }, 'period'],
  ])('bad input: %s is a 400 naming the field', async (_name, body, field) => {
    const account = proxy.account;
    for (const path of [`/api/tokens/${account.tokenId}/budget`, '/api/budgets/requesters/alice']) {
      const answer = await putJson(path, account.token, body);
      expect(answer.status).toBe(400);
      expect((answer.body.error as { field: string }).field).toBe(field);
      expect((answer.body.error as { message: string }).message).toContain(field);
    }
  });

  it('bad input: a NaN literal (not JSON) and a requester label over the row bound are 400s', async () => {
    const nan = await fetch(`${proxy.url}/api/budgets/requesters/alice`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
      body: '{"limit_usd": NaN, "period": "day"}',
    });
    expect(nan.status).toBe(400);
    const long = await putJson(`/api/budgets/requesters/${'r'.repeat(8_193)}`, proxy.account.token, {
      limit_usd: 1,
      period: 'day',
    });
    expect(long.status).toBe(400);
    expect((long.body.error as { field: string }).field).toBe('requester');
    expect(
      (
        await putJson(`/api/budgets/requesters/${'r'.repeat(8_192)}`, proxy.account.token, {
          limit_usd: 1,
          period: 'day',
        })
      ).status,
    ).toBe(200);
  });

  it('needs the manage scope', async () => {
    const created = await proxy.api('/api/tokens', { token: proxy.account.token, body: { name: 'app' } });
    const app = (await created.json()) as { token: string; token_id: string };
    proxy.secrets.add(app.token);
    expect(
      (await putJson(`/api/tokens/${app.token_id}/budget`, app.token, { limit_usd: 1, period: 'day' })).status,
    ).toBe(403);
    expect((await proxy.api('/api/budgets', { token: app.token })).status).toBe(403);
  });
});
