/**
 * A store outage inside a management route, after the caller's credential was
 * checked (the store throttling, failing with 500s, or cutting connections on
 * the route's own call): the answer is a 503 with `Retry-After` in the
 * management API's error shape, with no store detail or credential in it, and
 * one log line server-side. A store that answers but refuses the request as
 * malformed is a bug on the proxy's side and stays a 500.
 */
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { startStoreGate, type Disturbance, type StoreCall, type StoreGate } from './support/store-gate';

let gate: StoreGate;
let proxy: ProxyServer;
let account: Account;

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  gate = await startStoreGate(endpoint);
  proxy = await startProxy({ env: { DYNAMODB_ENDPOINT: gate.endpoint } });
  account = await proxy.createAccount('management-outage');
  await proxy.saveKey(account.token, 'prov-b');
});
afterAll(async () => {
  gate?.calm();
  await proxy?.stop();
  await gate?.close();
});
afterEach(() => gate.calm());

/** Enough disturbances for every attempt the store client makes at one call, however many it is. */
const EVERY_ATTEMPT = 1_000;

const isTable = (call: StoreCall, table: string) => call.tables.some((name) => name.endsWith(table));
/** Calls of one operation on one table that mention `marker` (an account id, a key's sort key prefix). */
const callOf = (operation: string, table: string, marker: string) => (call: StoreCall) =>
  call.operation === operation && isTable(call, table) && JSON.stringify(call.body).includes(marker);

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  requestId: string;
}

async function send(path: string, init: { method?: string; token?: string; body?: unknown }): Promise<Answer> {
  const response = await proxy.api(path, init);
  return {
    status: response.status,
    headers: response.headers,
    text: await response.text(),
    requestId: response.headers.get('x-proxy-request-id') ?? '',
  };
}

/** What must never reach a caller: the store's own words, its address, any credential. */
function expectNothingInternal(answer: Answer): void {
  const storePort = new URL(gate.endpoint).port;
  for (const leak of [
    account.token,
    proxy.adminKey,
    storePort,
    'Exception',
    'InternalServerError',
    'ECONN',
    'socket hang up',
    'dynamodb',
    '    at ',
  ]) {
    expect([leak, answer.text.includes(leak)]).toEqual([leak, false]);
  }
}

function expectUnavailable(answer: Answer): void {
  expect(answer.status).toBe(503);
  expect(answer.headers.get('retry-after')).toBe('1');
  expect(answer.headers.get('content-type')).toContain('application/json');
  expect(JSON.parse(answer.text)).toEqual({
    error: {
      code: 'store_unavailable',
      message:
        'The usage store is temporarily unavailable; the management request could not be completed. Retry shortly.',
      field: null,
    },
  });
  expectNothingInternal(answer);
}

/** The server's error lines about one request: the operator's view. */
function errorLinesOf(requestId: string): Array<Record<string, unknown>> {
  return proxy
    .output()
    .split('\n')
    .filter((line) => line.includes(requestId) && line.includes('"level":"ERROR"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** One error line for the request, naming the refusal and, as its cause, what the store did. */
function expectLoggedOnce(requestId: string, status: number, cause: RegExp): void {
  const lines = errorLinesOf(requestId);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ message: 'request failed', status });
  expect(JSON.stringify(lines[0])).toMatch(cause);
}

const CAUSES: Record<
  Exclude<Disturbance, 'lose-answer' | 'reject' | 'exceed-throughput' | 'throttle-transaction'>,
  RegExp
> = {
  throttle: /ThrottlingException/,
  fail: /InternalServerError/,
  reset: /ECONNRESET|socket hang up/,
};

describe.each(Object.keys(CAUSES) as Array<keyof typeof CAUSES>)(
  'the store answering the route\'s own call with "%s"',
  (disturbance) => {
    test('an account route (GET /api/keys, past the token check): 503 with Retry-After, then 200 once the store answers', async () => {
      gate.disturb(disturbance, callOf('Query', 'accounts', account.accountId), EVERY_ATTEMPT);
      const disturbedBefore = gate.disturbed;
      const refused = await send('/api/keys', { token: account.token });
      // The token was read and accepted: the failure came from the route's own call.
      expect(gate.disturbed).toBeGreaterThan(disturbedBefore);
      expectUnavailable(refused);
      expectLoggedOnce(refused.requestId, 503, CAUSES[disturbance]);

      gate.calm();
      const served = await send('/api/keys', { token: account.token });
      expect(served.status).toBe(200);
      expect(JSON.parse(served.text).keys).toEqual([expect.objectContaining({ provider: 'prov-b' })]);
    });

    test('an admin route (POST /api/admin/accounts): the same 503', async () => {
      gate.disturb(
        disturbance,
        (call) =>
          call.operation === 'PutItem' && isTable(call, 'accounts') && JSON.stringify(call.body).includes('"ACCOUNT"'),
        EVERY_ATTEMPT,
      );
      const refused = await send('/api/admin/accounts', { body: { name: 'during the outage' } });
      expectUnavailable(refused);
      expectLoggedOnce(refused.requestId, 503, CAUSES[disturbance]);

      gate.calm();
      expect((await send('/api/admin/accounts', { body: { name: 'after the outage' } })).status).toBe(201);
    });
  },
);

test('an account and a token whose store write went through but whose answer was lost are created once, and work', async () => {
  // The first account write (sort key ACCOUNT) and the first token transaction, answered by nobody; the client sends them again.
  gate.disturb(
    'lose-answer',
    (call) =>
      call.operation === 'PutItem' &&
      isTable(call, 'accounts') &&
      JSON.stringify(call.body).includes('"sk":{"S":"ACCOUNT"}'),
    1,
  );
  const created = await send('/api/admin/accounts', { body: { name: 'lost answer' } });
  expect(created.status).toBe(201);
  const { token: first } = JSON.parse(created.text) as { token: string };
  proxy.secrets.add(first);
  expect(gate.disturbed).toBeGreaterThanOrEqual(1);
  const before = gate.disturbed;
  gate.disturb('lose-answer', (call) => call.operation === 'TransactWriteItems' && isTable(call, 'rate-limits'), 1);
  const issued = await send('/api/tokens', { token: first, body: { name: 'after a lost answer' } });
  expect(issued.status).toBe(201);
  expect(gate.disturbed).toBe(before + 1);
  const { token: second } = JSON.parse(issued.text) as { token: string };
  proxy.secrets.add(second);
  const tokens = JSON.parse((await send('/api/tokens', { token: first })).text) as { tokens: unknown[] };
  expect(tokens.tokens).toHaveLength(2);
  await proxy.saveKey(first, 'prov-b');
  expect((await callProxy(proxy, { provider: 'prov-b', token: second })).status).toBe(200);
});

test('a write (PUT /api/keys/{provider}) whose store call is throttled: 503, and the key list is unchanged', async () => {
  gate.disturb('throttle', callOf('PutItem', 'accounts', account.accountId), EVERY_ATTEMPT);
  const refused = await send('/api/keys/prov-d', {
    method: 'PUT',
    token: account.token,
    body: { key: 'outage-provider-key-0001' },
  });
  expectUnavailable(refused);
  expect(refused.text).not.toContain('outage-provider-key-0001');
  expectLoggedOnce(refused.requestId, 503, CAUSES.throttle);
  gate.calm();
  const keys = JSON.parse((await send('/api/keys', { token: account.token })).text) as {
    keys: Array<{ provider: string }>;
  };
  expect(keys.keys.map((key) => key.provider)).toEqual(['prov-b']);
});

test('the log reads (GET /api/logs, /api/logs.csv, /api/stats) answer 503 rather than a 200 cut short', async () => {
  gate.disturb(
    'fail',
    (call) => call.operation === 'Query' && (isTable(call, 'usage-logs') || isTable(call, 'usage-stats')),
    EVERY_ATTEMPT,
  );
  for (const path of ['/api/logs', '/api/logs.csv', '/api/stats']) {
    const refused = await send(path, { token: account.token });
    expect([path, refused.status]).toEqual([path, 503]);
    expectUnavailable(refused);
    expectLoggedOnce(refused.requestId, 503, CAUSES.fail);
  }
  gate.calm();
  const csv = await send('/api/logs.csv', { token: account.token });
  expect(csv.status).toBe(200);
  expect(csv.text).toMatch(/^id,ts,provider,/);
});

test('the whole store down: every management route but /api/health answers the same 503, each logged once', async () => {
  const admin = (method: string, path: string, body?: unknown) => ({ method, path, body });
  const own = (method: string, path: string, body?: unknown) => ({ method, path, body, token: account.token });
  const tokenId = account.tokenId;
  const routes = [
    admin('POST', '/api/admin/accounts', {}),
    admin('POST', `/api/admin/accounts/${account.accountId}/tokens`, {}),
    admin('DELETE', `/api/admin/tokens/${tokenId}`),
    own('PUT', '/api/keys/prov-c', { key: 'outage-provider-key-0002' }),
    own('GET', '/api/keys'),
    own('DELETE', '/api/keys/prov-b'),
    own('GET', '/api/tokens'),
    own('POST', '/api/tokens', {}),
    own('DELETE', `/api/tokens/${tokenId}`),
    own('PUT', `/api/tokens/${tokenId}/budget`, { limit_usd: 5, period: 'daily' }),
    own('DELETE', `/api/tokens/${tokenId}/budget`),
    own('PUT', '/api/budgets/requesters/outage-script', { limit_usd: 5, period: 'daily' }),
    own('DELETE', '/api/budgets/requesters/outage-script'),
    own('GET', '/api/budgets'),
    own('GET', '/api/logs'),
    own('GET', '/api/logs/0000000000000-outage'),
    own('GET', '/api/logs.csv'),
    own('GET', '/api/stats'),
  ];
  gate.set('down');
  try {
    for (const route of routes) {
      const refused = await send(route.path, route);
      expect([route.method, route.path, refused.status]).toEqual([route.method, route.path, 503]);
      expectUnavailable(refused);
      expectLoggedOnce(refused.requestId, 503, /ECONNRESET|ECONNREFUSED|socket hang up/);
    }
    expect((await fetch(`${proxy.url}/api/health`)).status).toBe(200);
  } finally {
    gate.set('up');
  }
  // Nothing was done: the token still works and its key is still there.
  const keys = JSON.parse((await send('/api/keys', { token: account.token })).text) as {
    keys: Array<{ provider: string }>;
  };
  expect(keys.keys.map((key) => key.provider)).toEqual(['prov-b']);
});

test('a store that answers but refuses the call as malformed (a bug on our side) stays a 500, logged once, without its detail', async () => {
  gate.disturb('reject', callOf('Query', 'accounts', account.accountId), EVERY_ATTEMPT);
  const failed = await send('/api/keys', { token: account.token });
  expect(failed.status).toBe(500);
  expect(failed.headers.get('retry-after')).toBeNull();
  expect(JSON.parse(failed.text)).toEqual({
    error: {
      code: 'internal_error',
      message: 'Internal error in the proxy. The request id is in the x-proxy-request-id header.',
      field: null,
    },
  });
  expectNothingInternal(failed);
  expect(failed.text).not.toContain('parameter values were invalid');
  expectLoggedOnce(failed.requestId, 500, /ValidationException/);
});

test('a store that refuses to keep the sums of past hours and days (IAM, throttling) costs /api/stats nothing but a warning', async () => {
  const fresh = await proxy.createAccount('stats-sums-refused');
  const disturbedBefore = gate.disturbed;
  // The stream consumer may have warned already, while the store was down in an earlier test.
  const warningCount = () =>
    proxy.timesPrinted('sums of a past hour or day not kept; the next stats read sums it again');
  const warnedBefore = warningCount();
  gate.disturb(
    'reject',
    (call) => callOf('UpdateItem', 'usage-stats', fresh.accountId)(call) && JSON.stringify(call.body).includes('SUM#'),
    EVERY_ATTEMPT,
  );
  const answer = await send('/api/stats', { token: fresh.token });
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.text)).toMatchObject({ totals: { requests: 0 } });
  expect(gate.disturbed).toBeGreaterThan(disturbedBefore);
  expect(warningCount()).toBeGreaterThan(warnedBefore);
});
