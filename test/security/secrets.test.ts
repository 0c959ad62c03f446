/**
 * Secrets stay secret: provider keys and proxy tokens never appear in a log
 * line, an error body, a row, a header or a dashboard/API answer; tokens are
 * stored only as hashes; pass-through keys are never stored, cached or kept
 * beyond their request. The last test scans every byte returned and printed.
 */
import { createHash } from 'node:crypto';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import {
  credentialHeaders,
  ENDPOINT,
  expectEndpointError,
  PROVIDERS,
  requestBody,
} from '../reliability/support/requests';
import { rowOf } from '../reliability/support/rows';
import { Observed, rawAccountItems, tableText, tokenSecret } from './support/observed';

const TABLE_PREFIX = `sec${Date.now().toString(36)}-`;
const PASS_THROUGH_KEYS = Object.fromEntries(
  PROVIDERS.map((id) => [id, `${id}-client-own-secret-${createHash('sha256').update(id).digest('hex').slice(0, 20)}`]),
) as Record<ProviderId, string>;

let proxy: ProxyServer;
let token: string;
const seen = new Observed();

beforeAll(async () => {
  proxy = await startProxy({ tablePrefix: TABLE_PREFIX });
  token = proxy.account.token;
  for (const key of Object.values(PASS_THROUGH_KEYS)) proxy.secrets.add(key);
  proxy.secrets.add(proxy.adminKey);
});
afterAll(async () => {
  await proxy?.stop();
});

function allSecrets(): string[] {
  const secrets = new Set<string>([
    ...proxy.secrets,
    proxy.adminKey,
    ...Object.values(proxy.storedKeys),
    ...Object.values(PASS_THROUGH_KEYS),
  ]);
  for (const secret of [...secrets]) if (secret.startsWith('sk-proxy-')) secrets.add(tokenSecret(secret));
  return [...secrets];
}

const proxyCall = (id: ProviderId, headers: Record<string, string>, body: Record<string, unknown> = requestBody(id)) =>
  seen.fetch(proxy.proxyBase + ENDPOINT[id], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const api = (path: string, init: { method?: string; token?: string; body?: unknown } = {}) =>
  seen.fetch(proxy.url + path, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.token ?? token}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

test('traffic of every kind: stored and pass-through, JSON and streams, cached, and the management API', async () => {
  for (const id of PROVIDERS) {
    for (const stream of [false, true]) {
      expect((await proxyCall(id, credentialHeaders(id, token), requestBody(id, 'secret scan', stream))).status).toBe(
        200,
      );
      const cached = { ...credentialHeaders(id, token, PASS_THROUGH_KEYS[id]), 'x-proxy-cache': 'true' };
      expect((await proxyCall(id, cached, requestBody(id, 'secret scan cached', stream))).status).toBe(200);
      expect((await proxyCall(id, cached, requestBody(id, 'secret scan cached', stream))).status).toBe(200);
    }
  }
  for (const path of ['/api/keys', '/api/logs?limit=500', '/api/stats', '/api/tokens', '/api/health'])
    expect((await api(path)).status).toBe(200);
  const page = await seen.fetch(`${proxy.url}/`);
  expect(page.status).toBe(200);
  for (const asset of page.text.match(/\/assets\/[\w.-]+/g) ?? [])
    expect((await seen.fetch(proxy.url + asset)).status).toBe(200);
});

test('error answers never echo the credential they refuse', async () => {
  const forged = `${token.slice(0, -6)}ABCDEF`;
  const wrongKey = 'sk-looks-like-a-provider-key-0123456789';
  proxy.secrets.add(forged);
  proxy.secrets.add(wrongKey);
  for (const id of ['prov-a', 'prov-b'] as ProviderId[]) {
    const refused = [
      await proxyCall(id, credentialHeaders(id, forged)),
      await proxyCall(id, { ...credentialHeaders(id, wrongKey), 'x-proxy-token': forged }),
      await proxyCall(id, { ...credentialHeaders(id, token), 'x-proxy-cache': `maybe ${token}` }),
      await proxyCall(id, credentialHeaders(id, token), { model: token, messages: 'not an array', max_tokens: 1 }),
    ];
    for (const answer of refused) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      const message = expectEndpointError(id, answer.text);
      expect(message).not.toContain(forged);
      expect(message).not.toContain(tokenSecret(token));
      expect(message).not.toContain(wrongKey);
    }
  }
  expect((await api('/api/logs', { token: forged })).status).toBe(401);
  expect((await api('/api/admin/accounts', { method: 'POST', token: `${proxy.adminKey}x`, body: {} })).status).toBe(
    401,
  );
  // A 5xx is retried on the same model (docs/fallbacks.md): it persists for all three attempts.
  for (let i = 0; i < 3; i++) proxy.fakes.fakes['prov-d'].next({ status: 500 });
  expect((await proxyCall('prov-d', credentialHeaders('prov-d', token))).status).toBe(500);
});

test('a provider error that quotes the stored key does not hand it to the client or to the log row', async () => {
  // Some OpenAI-compatible servers quote the key they refused; the stored key is the account's secret, not the caller's.
  const storedKey = proxy.storedKeys['prov-b'];
  proxy.fakes.fakes['prov-b'].next({ status: 401, errorMessage: `Incorrect API key provided: ${storedKey}.` });
  const answer = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
    body: JSON.stringify(requestBody('prov-b')),
  });
  const text = await answer.text();
  expect(answer.status).toBe(401);
  const row = await rowOf(proxy, token, answer.headers.get('x-proxy-request-id')!);
  expect(row.error).toBeDefined();
  expect(row.error).not.toContain(storedKey);
  expect(text).not.toContain(storedKey);
});

test('tokens are stored only as SHA-256 hashes of their secret part, and no key is stored in the clear', async () => {
  const items = await rawAccountItems(TABLE_PREFIX);
  const tokenItem = items.find((item) => item.sk === `TOKEN#${proxy.account.tokenId}`);
  expect(tokenItem).toBeDefined();
  expect(tokenItem!.secret_hash).toBe(createHash('sha256').update(tokenSecret(token), 'utf8').digest('hex'));
  const tables = await tableText(TABLE_PREFIX);
  // The token's gate item in the rate-limits table carries the same hash, and no more of the token.
  const hash = tokenItem!.secret_hash as string;
  const gate = tables.rateLimits!.find((item) => item.includes(`counter_key=TOKEN#${proxy.account.tokenId}`));
  expect(gate).toContain(`secret_hash=${hash}`);
  const everything = Object.values(tables).flat().join('\n');
  expect(everything.length).toBeGreaterThan(0);
  for (const secret of allSecrets())
    expect(everything.includes(secret) ? secret.slice(0, 12) : 'absent').toBe('absent');
});

test('pass-through keys are in no table (rows, cache entries, rollups, accounts) and are not kept after their request', async () => {
  const tables = await tableText(TABLE_PREFIX);
  expect(tables.cache!.length).toBeGreaterThan(0);
  for (const [table, items] of Object.entries(tables)) {
    for (const key of Object.values(PASS_THROUGH_KEYS))
      expect(`${table}: ${items.some((item) => item.includes(key))}`).toBe(`${table}: false`);
  }
  // The next request of the same account without a key is not served with the last one.
  const fake = proxy.fakes.fakes['prov-c'];
  const before = fake.requests.length;
  const keyless = await proxyCall('prov-c', { authorization: 'Bearer ', 'x-proxy-token': token });
  expect(keyless.status).toBe(401);
  const other = 'prov-c-another-client-key-000000000001';
  proxy.secrets.add(other);
  expect((await proxyCall('prov-c', credentialHeaders('prov-c', token, other))).status).toBe(200);
  expect(fake.requests.slice(before).map((request) => request.headers.authorization)).toEqual([`Bearer ${other}`]);
});

test('no secret appears in anything the server returned or printed', async () => {
  expect(seen.count).toBeGreaterThan(40);
  expect(seen.leaks(allSecrets())).toEqual([]);
  // The server's own output: the first-run banner prints its own account's token by design; that token is none of these.
  seen.record(proxy.output());
  expect(seen.leaks(allSecrets())).toEqual([]);
});
