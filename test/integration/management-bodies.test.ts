import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * Every management body rule, as a caller meets it: the status, the error body
 * (chat-completions style, naming the field in `param`) and, for an accepted
 * body, what was stored.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const NAME = 'name must be a string of at most 200 characters.';
const SCOPES = 'scopes must be a non-empty array of "proxy" and/or "manage".';
const KEY = 'key must be the provider API key as a string.';
const LIMIT = 'limit_usd must be a number of dollars greater than 0 and at most 1000000.';
const DECIMALS = 'limit_usd can have at most 6 decimal places.';
const PERIOD = 'period must be "day", "month" or "total" (UTC calendar periods).';
const NOT_OBJECT = 'The request body must be a JSON object.';

async function send(path: string, method: string, token: string, body: unknown) {
  const response = await fetch(`${proxy.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined };
}

const refusal = (message: string, param: string | null) => ({ status: 400, body: { error: { message, type: 'invalid_request_error', param, code: null } } });

describe('management bodies', () => {
  it.each<[string, unknown, string, string | null]>([
    ['a name that is not a string', { name: 5 }, NAME, 'name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, NAME, 'name'],
    ['scopes that are not an array', { scopes: 'proxy' }, SCOPES, 'scopes'],
    ['no scopes', { scopes: [] }, SCOPES, 'scopes'],
    ['an unknown scope', { scopes: ['proxy', 'admin'] }, SCOPES, 'scopes'],
    ['a bad name and bad scopes: the name is answered first', { name: [], scopes: 3 }, NAME, 'name'],
    ['an array body', '[]', NOT_OBJECT, null],
    ['a body that is not JSON', '{"name":', NOT_OBJECT, null],
  ])('admin token: %s is a 400 naming the field', async (_label, body, message, param) => {
    expect(await send(`/api/admin/accounts/${proxy.account.accountId}/tokens`, 'POST', proxy.adminKey, body)).toEqual(refusal(message, param));
  });

  it('admin token: scopes default to all, repeats are dropped, a null name is no name', async () => {
    const all = await send(`/api/admin/accounts/${proxy.account.accountId}/tokens`, 'POST', proxy.adminKey, { name: null });
    expect(all.status).toBe(201);
    const once = await send(`/api/admin/accounts/${proxy.account.accountId}/tokens`, 'POST', proxy.adminKey, { name: 'ops', scopes: ['manage', 'manage'] });
    expect(once.status).toBe(201);
    for (const created of [all, once]) proxy.secrets.add(String(created.body!.token));
    const listed = (await (await proxy.api('/api/tokens', { token: proxy.account.token })).json()) as { tokens: Array<{ token_id: string; name: string; scopes: string[] }> };
    expect(listed.tokens.find((t) => t.token_id === all.body!.token_id)).toMatchObject({ name: '', scopes: ['proxy', 'manage'] });
    expect(listed.tokens.find((t) => t.token_id === once.body!.token_id)).toMatchObject({ name: 'ops', scopes: ['manage'] });
  });

  it('new account: the same name rule', async () => {
    expect(await send('/api/admin/accounts', 'POST', proxy.adminKey, { name: { first: 'a' } })).toEqual(refusal(NAME, 'name'));
  });

  it.each<[string, unknown]>([
    ['a null name', { name: null }],
    ['a number', { name: 7 }],
    ['201 characters', { name: 'n'.repeat(201) }],
  ])('app token: %s is refused', async (_label, body) => {
    expect(await send('/api/tokens', 'POST', proxy.account.token, body)).toEqual(refusal(NAME, 'name'));
  });

  it.each<[string, unknown]>([
    ['no key', {}],
    ['a number', { key: 12345678 }],
    ['fewer than 8 characters once trimmed', { key: '   1234567   ' }],
    ['over 4096 characters', { key: 'k'.repeat(4097) }],
  ])('provider key: %s is refused', async (_label, body) => {
    expect(await send('/api/keys/prov-d', 'PUT', proxy.account.token, body)).toEqual(refusal(KEY, 'key'));
  });

  it('provider key: stored trimmed (the hint shows its real last four characters)', async () => {
    const account = await proxy.createAccount('bodies-key');
    expect(await send('/api/keys/prov-d', 'PUT', account.token, { key: '  mistral-key-wxyz  ' })).toEqual({ status: 200, body: { provider: 'prov-d', hint: '…wxyz' } });
  });

  it.each<[string, unknown, string, string]>([
    ['a string limit', { limit_usd: '25', period: 'day' }, LIMIT, 'limit_usd'],
    ['a zero limit', { limit_usd: 0, period: 'day' }, LIMIT, 'limit_usd'],
    ['a negative limit', { limit_usd: -5, period: 'day' }, LIMIT, 'limit_usd'],
    ['a limit over a million', { limit_usd: 1_000_000.5, period: 'day' }, LIMIT, 'limit_usd'],
    ['seven decimals', { limit_usd: 0.0000001, period: 'day' }, DECIMALS, 'limit_usd'],
    ['an unknown period', { limit_usd: 5, period: 'week' }, PERIOD, 'period'],
    ['no period', { limit_usd: 5 }, PERIOD, 'period'],
    ['both wrong: the limit is answered first', { limit_usd: null, period: 'week' }, LIMIT, 'limit_usd'],
  ])('budget: %s is refused', async (_label, body, message, param) => {
    expect(await send('/api/budgets/requesters/bodies', 'PUT', proxy.account.token, body)).toEqual(refusal(message, param));
  });
});
