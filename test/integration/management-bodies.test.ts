import { connect } from 'node:net';
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
  return {
    status: response.status,
    body: (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined,
  };
}

const refusal = (message: string, param: string | null) => ({
  status: 400,
  body: { error: { code: 'invalid_request', message, field: param } },
});

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
    expect(await send(`/api/admin/accounts/${proxy.account.accountId}/tokens`, 'POST', proxy.adminKey, body)).toEqual(
      refusal(message, param),
    );
  });

  it('admin token: scopes default to all, repeats are dropped, a null name is no name', async () => {
    const all = await send(`/api/admin/accounts/${proxy.account.accountId}/tokens`, 'POST', proxy.adminKey, {
      name: null,
    });
    expect(all.status).toBe(201);
    const once = await send(`/api/admin/accounts/${proxy.account.accountId}/tokens`, 'POST', proxy.adminKey, {
      name: 'ops',
      scopes: ['manage', 'manage'],
    });
    expect(once.status).toBe(201);
    for (const created of [all, once]) proxy.secrets.add(String(created.body!.token));
    const listed = (await (await proxy.api('/api/tokens', { token: proxy.account.token })).json()) as {
      tokens: Array<{ token_id: string; name: string; scopes: string[] }>;
    };
    expect(listed.tokens.find((t) => t.token_id === all.body!.token_id)).toMatchObject({
      name: '',
      scopes: ['proxy', 'manage'],
    });
    expect(listed.tokens.find((t) => t.token_id === once.body!.token_id)).toMatchObject({
      name: 'ops',
      scopes: ['manage'],
    });
  });

  it('new account: the same name rule', async () => {
    expect(await send('/api/admin/accounts', 'POST', proxy.adminKey, { name: { first: 'a' } })).toEqual(
      refusal(NAME, 'name'),
    );
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
    expect(await send('/api/keys/prov-d', 'PUT', account.token, { key: '  mistral-key-wxyz  ' })).toEqual({
      status: 200,
      body: { provider: 'prov-d', label: 'default', hint: '…wxyz' },
    });
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
    expect(await send('/api/budgets/requesters/bodies', 'PUT', proxy.account.token, body)).toEqual(
      refusal(message, param),
    );
  });

  const TAGS = 'tags must be an object of tag keys to string values, e.g. {"team": "search"}.';
  const RPM = 'requests_per_minute must be an integer from 1 to 120,000 (or null for the default).';
  const MODELS =
    'models must be a list of 1 to 100 model ids or id prefixes, each 1 to 200 characters (or null for any model).';

  it.each<[string, unknown, string, string]>([
    ['no tags', {}, TAGS, 'tags'],
    ['tags as a string', { tags: 'team=search' }, TAGS, 'tags'],
    ['tags as a list', { tags: ['team'] }, TAGS, 'tags'],
    ['a number value', { tags: { team: 5 } }, 'tags.team: a tag value must be a string.', 'tags'],
    [
      'an upper-case key',
      { tags: { Team: 'search' } },
      'tags: tag key "Team" must be 1 to 40 lowercase letters, digits, "_", "-" or ".".',
      'tags',
    ],
    [
      'a key over 40 characters',
      { tags: { ['k'.repeat(41)]: 'v' } },
      `tags: tag key "${'k'.repeat(41)}" must be 1 to 40 lowercase letters, digits, "_", "-" or ".".`,
      'tags',
    ],
    ['an empty value', { tags: { team: '' } }, 'tags: tag "team" has an empty value.', 'tags'],
    [
      'a value with a comma',
      { tags: { team: 'a,b' } },
      'tags: the value of tag "team" must be printable ASCII characters other than ",".',
      'tags',
    ],
    [
      'eleven tags',
      { tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) },
      'tags: at most 10 tags, got 11.',
      'tags',
    ],
    ['an unknown field', { tags: {}, name: 'x' }, 'Unknown field "name": this body takes "tags".', 'name'],
  ])('token tags: %s is refused', async (_label, body, message, param) => {
    expect(await send(`/api/tokens/${proxy.account.tokenId}`, 'PUT', proxy.account.token, body)).toEqual(
      refusal(message, param),
    );
  });

  it.each<[string, unknown, string, string]>([
    ['a zero rate', { requests_per_minute: 0 }, RPM, 'requests_per_minute'],
    ['a rate over 120,000', { requests_per_minute: 120_001 }, RPM, 'requests_per_minute'],
    ['a fractional rate', { requests_per_minute: 2.5 }, RPM, 'requests_per_minute'],
    ['a rate as text', { requests_per_minute: '5' }, RPM, 'requests_per_minute'],
    ['an empty model list', { models: [] }, MODELS, 'models'],
    ['a model list as text', { models: 'claude-haiku-' }, MODELS, 'models'],
    ['an empty model id', { models: [''] }, MODELS, 'models'],
    [
      'a misspelt field',
      { request_per_minute: 5 },
      'Unknown field "request_per_minute": this body takes "requests_per_minute" and "models".',
      'request_per_minute',
    ],
  ])('token limits: %s is refused', async (_label, body, message, param) => {
    expect(await send(`/api/tokens/${proxy.account.tokenId}/limits`, 'PUT', proxy.account.token, body)).toEqual(
      refusal(message, param),
    );
  });

  it("token settings of another account's token, or of no token, are a 404", async () => {
    const other = await proxy.createAccount('bodies-other');
    for (const path of [`/api/tokens/${other.tokenId}`, `/api/tokens/${proxy.account.accountId}_nosuchtoken`]) {
      expect((await send(path, 'PUT', proxy.account.token, { tags: {} })).status).toBe(404);
      expect((await send(`${path}/limits`, 'PUT', proxy.account.token, {})).status).toBe(404);
    }
  });

  it.each<[string, string, string, string]>([
    [
      'an upper-case key',
      'Team/search',
      'key: tag key "Team" must be 1 to 40 lowercase letters, digits, "_", "-" or ".".',
      'key',
    ],
    [
      'the reserved value',
      'team/(other)',
      "value: the value (other) is reserved (stats use it for values past a key's limit).",
      'value',
    ],
  ])('tag budget: %s is refused', async (_label, path, message, param) => {
    expect(
      await send(`/api/budgets/tags/${path}`, 'PUT', proxy.account.token, { limit_usd: 1, period: 'day' }),
    ).toEqual(refusal(message, param));
  });

  it('budget: the `alerts_at` typo is a 400 saying which fields the body takes', async () => {
    expect(
      await send('/api/budgets/requesters/typo', 'PUT', proxy.account.token, {
        limit_usd: 1,
        period: 'day',
        alerts_at: [0.5],
      }),
    ).toEqual(
      refusal(
        'Unknown field "alerts_at": this body takes "limit_usd", "period" and, if you like, "alert_at".',
        'alerts_at',
      ),
    );
  });

  it.each<[string, string, string, unknown, string]>([
    ['budget', 'PUT', '/api/budgets/requesters/typo', { limit_usd: 1, period: 'day', alerts_at: [0.5] }, 'alerts_at'],
    ['provider key', 'PUT', '/api/keys/prov-d', { key: 'mistral-key-abcd', provider: 'prov-d' }, 'provider'],
    ['app token', 'POST', '/api/tokens', { name: 'ci', scope: ['proxy'] }, 'scope'],
    ['price', 'PUT', '/api/prices/house-model', { input: 1, output: 2, cache_reads: 1 }, 'cache_reads'],
  ])('%s: an unknown field is a 400 naming it, and nothing is stored', async (_label, method, path, body, field) => {
    const account = await proxy.createAccount(`bodies-unknown-${field}`);
    const answer = await send(path, method, account.token, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code: 'invalid_request', field } });
    expect((answer.body!.error as { message: string }).message).toMatch(
      new RegExp(`^Unknown field "${field}": this body takes `),
    );
    const budgets = (await (await proxy.api('/api/budgets', { token: account.token })).json()) as Record<
      string,
      unknown[]
    >;
    expect(Object.values(budgets).flat()).toEqual([]);
    const keys = (await (await proxy.api('/api/keys', { token: account.token })).json()) as { keys: unknown[] };
    expect(keys.keys).toEqual([]);
  });

  it.each<[string, string, unknown, string]>([
    ['new account', '/api/admin/accounts', { name: 'acme', plan: 'pro' }, 'plan'],
    ['admin token', `/api/admin/accounts/{account}/tokens`, { name: 'ops', scope: ['manage'] }, 'scope'],
  ])('%s: an unknown field is a 400 naming it', async (_label, path, body, field) => {
    const answer = await send(path.replace('{account}', proxy.account.accountId), 'POST', proxy.adminKey, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code: 'invalid_request', field } });
  });

  it('price: the model id is limited in UTF-8 bytes, as the store keys it (512 ASCII characters, 170 of "模")', async () => {
    const account = await proxy.createAccount('bodies-price-bytes');
    const put = (model: string) =>
      send(`/api/prices/${encodeURIComponent(model)}`, 'PUT', account.token, { input: 1, output: 2 });
    expect((await put('模'.repeat(170))).status).toBe(200);
    expect((await put('m'.repeat(512))).status).toBe(200);
    const tooLong = await put('模'.repeat(171));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ error: { field: 'model' } });
    expect((tooLong.body!.error as { message: string }).message).toContain('512 bytes in UTF-8');
    // The case the store used to fail on with a 500: 512 characters that are 1,536 bytes.
    expect((await put('模'.repeat(512))).status).toBe(400);
    expect((await put('m'.repeat(513))).status).toBe(400);
  });

  it('price: the cap of 200 holds when new prices arrive at once (checked in the write, not on a list read before it)', async () => {
    const account = await proxy.createAccount('bodies-price-cap');
    const put = (model: string) => send(`/api/prices/${model}`, 'PUT', account.token, { input: 1, output: 2 });
    for (let start = 0; start < 195; start += 15)
      await Promise.all(
        Array.from({ length: Math.min(15, 195 - start) }, (_, i) => put(`model-${start + i}`)).map(async (done) =>
          expect((await done).status).toBe(200),
        ),
      );
    // 20 new models at once for the last 5 places: exactly 5 are stored.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => put(`late-${i}`)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
    const refused = answers.filter((answer) => answer.status === 400);
    expect(refused).toHaveLength(15);
    expect(refused[0]!.body).toMatchObject({ error: { field: 'model' } });
    const listed = (await (await proxy.api('/api/prices', { token: account.token })).json()) as { prices: unknown[] };
    expect(listed.prices).toHaveLength(200);
    // At the cap, an existing price can still be changed, and a deleted one makes room for one more.
    expect((await put('model-0')).status).toBe(200);
    expect((await send('/api/prices/model-1', 'DELETE', account.token, undefined)).status).toBe(204);
    expect((await put('one-more')).status).toBe(200);
    expect((await put('one-too-many')).status).toBe(400);
  });
});

describe('the local server', () => {
  it('answers a client that half-closes its side right after a complete request', async () => {
    const { hostname, port } = new URL(proxy.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `GET /api/tokens HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${proxy.account.token}\r\n\r\n`,
        );
        socket.end(); // no more to send: the request is complete
      });
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain(`"token_id":"${proxy.account.tokenId}"`);
  });
});
