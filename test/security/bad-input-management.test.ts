/**
 * Every management API input that is stored or shown back refuses control and bidirectional
 * characters (a NUL, an escape sequence, a line separator, a right-to-left override): a 400 in the
 * management error shape naming the field, and nothing stored. One table over every route and
 * field that takes text: names, a token's model list, the webhook URL, budget subjects, tags and
 * the log filters.
 */
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { expectManagementError } from '../reliability/support/requests';

let proxy: ProxyServer;
let before: Record<string, unknown>;

beforeAll(async () => {
  proxy = await startProxy();
  before = await storedState();
});
afterAll(async () => {
  await proxy?.stop();
});

/** Each of the kinds of character refused: C0, escape, C1, line separator, bidi override and isolate, byte-order mark. */
const UNSAFE = ['\u0000', '\u001b[31m', '\u0085', '\u2028', '\u202e', '\u2066', '\ufeff'];

type Call = { method: string; path: string; body?: unknown; as?: 'admin' };
/** Where a text field goes: the call that carries `text` in the field named first. */
const ROUTES: [field: string, route: string, call: (text: string) => Call][] = [
  ['name', 'POST /api/tokens', (text) => ({ method: 'POST', path: '/api/tokens', body: { name: `app${text}` } })],
  [
    'name',
    'POST /api/admin/accounts',
    (text) => ({ method: 'POST', path: '/api/admin/accounts', body: { name: `acme${text}` }, as: 'admin' }),
  ],
  [
    'name',
    'POST /api/admin/accounts/:accountId/tokens',
    (text) => ({
      method: 'POST',
      path: `/api/admin/accounts/${proxy.account.accountId}/tokens`,
      body: { name: `ci${text}` },
      as: 'admin',
    }),
  ],
  [
    'models',
    'PUT /api/tokens/:tokenId/limits',
    (text) => ({
      method: 'PUT',
      path: `/api/tokens/${proxy.account.tokenId}/limits`,
      body: { models: ['gpt-4o-mini', `gpt${text}`] },
    }),
  ],
  [
    'tags',
    'PUT /api/tokens/:tokenId',
    (text) => ({ method: 'PUT', path: `/api/tokens/${proxy.account.tokenId}`, body: { tags: { team: `a${text}` } } }),
  ],
  [
    'url',
    'PUT /api/alerts/webhook',
    (text) => ({ method: 'PUT', path: '/api/alerts/webhook', body: { url: `https://hooks.example.com/x${text}y` } }),
  ],
  [
    'requester',
    'PUT /api/budgets/requesters/:requester',
    (text) => ({
      method: 'PUT',
      path: `/api/budgets/requesters/${encodeURIComponent(`jo${text}`)}`,
      body: { limit_usd: 5, period: 'day' },
    }),
  ],
  [
    'value',
    'PUT /api/budgets/tags/:key/:value',
    (text) => ({
      method: 'PUT',
      path: `/api/budgets/tags/team/${encodeURIComponent(`a${text}`)}`,
      body: { limit_usd: 5, period: 'day' },
    }),
  ],
  [
    'key',
    'PUT /api/budgets/tags/:key/:value',
    (text) => ({
      method: 'PUT',
      path: `/api/budgets/tags/${encodeURIComponent(`te${text}am`)}/a`,
      body: { limit_usd: 5, period: 'day' },
    }),
  ],
  ...(['requester', 'model', 'provider', 'token_id', 'cursor'] as const).flatMap((filter) =>
    (['/api/logs', '/api/logs.csv'] as const).map((path): [string, string, (text: string) => Call] => [
      filter,
      `GET ${path}?${filter}=`,
      (text) => ({ method: 'GET', path: `${path}?${filter}=${encodeURIComponent(`x${text}`)}` }),
    ]),
  ),
  [
    'tag',
    'GET /api/logs?tag=',
    (text) => ({ method: 'GET', path: `/api/logs?tag=${encodeURIComponent(`team=a${text}`)}` }),
  ],
];

async function send({ method, path, body, as }: Call): Promise<Response> {
  return fetch(`${proxy.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${as === 'admin' ? proxy.adminKey : proxy.account.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** What the account has stored that the calls above could change. */
async function storedState(): Promise<Record<string, unknown>> {
  const read = async (path: string) => {
    const response = await proxy.api(path, { token: proxy.account.token });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const [tokens, budgets, webhook] = await Promise.all([
    read('/api/tokens'),
    read('/api/budgets'),
    read('/api/alerts/webhook'),
  ]);
  return { tokens, budgets, webhook };
}

describe.each(ROUTES)('%s of %s', (field, _route, call) => {
  test.each(UNSAFE)('holding %j → 400 naming the field', async (unsafe) => {
    const response = await send(call(unsafe));
    const text = await response.text();
    expect(response.status).toBe(400);
    const error = expectManagementError(text);
    expect(error).toMatchObject({ code: 'invalid_request', field });
    // The refused text is not echoed back either.
    expect(text).not.toContain(unsafe);
  });
});

test('the same filters with plain text are accepted, and a plain non-ASCII name too (the table reaches the real checks)', async () => {
  for (const [, , call] of ROUTES) {
    const plain = call('');
    // A cursor is the API's own opaque text: `x` is not one (400), whatever it holds.
    if (plain.method === 'GET' && !plain.path.includes('cursor='))
      expect({ path: plain.path, status: (await send(plain)).status }).toEqual({ path: plain.path, status: 200 });
  }
  const created = await send(ROUTES[0][2]('José'));
  expect(created.status).toBe(201);
  madeTokenId = ((await created.json()) as { token_id: string }).token_id;
});

let madeTokenId = '';

test('nothing was stored by any refused call', async () => {
  const after = await storedState();
  type Listed = { body: { tokens: { token_id: string }[] } };
  // The plain-text token made above is the only change.
  const tokens = (after.tokens as Listed).body.tokens.filter((t) => t.token_id !== madeTokenId);
  expect(tokens).toEqual((before.tokens as Listed).body.tokens);
  expect(after.budgets).toEqual(before.budgets);
  expect(after.webhook).toEqual(before.webhook);
});
