/**
 * Bad input refused at the edge, in the endpoint's own shape, with nothing stored and nothing sent
 * (SECURITY.md, "Hostile input"): provider keys no header can carry, header values read as UTF-8
 * (raw sockets send the bytes a client library would refuse or normalise), control and
 * bidirectional characters in labels, and two different proxy tokens in one request.
 */
import Anthropic from '@anthropic-ai/sdk';
import { join } from 'node:path';
import OpenAI from 'openai';
import { EnvelopeSealer } from '../../lambda/keys/crypto/envelope';
import { LocalKeyWrapper } from '../../lambda/keys/crypto/local-key-wrapper';
import { DynamoProviderKeyStore } from '../../lambda/keys/dynamodb/provider-key-store';
import type { StatsSummary } from '../../lambda/usage/usage-stats';
import { csvRows } from '../support/csv';
import { eventually } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { createTestTables } from '../support/tables';
import {
  expectChatError,
  expectMessagesError,
  rawPost,
  rawRequest,
  upstreamCalls,
} from '../reliability/support/requests';

let proxy: ProxyServer;
let tables: Awaited<ReturnType<typeof createTestTables>>;

beforeAll(async () => {
  tables = await createTestTables();
  proxy = await startProxy({ tablePrefix: tables.prefix });
});
afterAll(async () => {
  await proxy?.stop();
});

const chat = (token: string) => new OpenAI({ baseURL: `${proxy.proxyBase}/prov-d/v1`, apiKey: token, maxRetries: 0 });
const ask = (token: string, model = 'gpt-4o-mini') =>
  chat(token).chat.completions.create({ model, messages: [{ role: 'user', content: 'edge' }] });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
  );

/** The UTF-8 bytes of `text` as the Latin-1 string rawPost writes byte for byte. */
const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
const BODY = JSON.stringify({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'edge' }] });
const post = (token: string, lines: string[], body = BODY) =>
  rawRequest(
    proxy.url,
    rawPost(
      proxy.url,
      '/api/proxy/prov-d/v1/chat/completions',
      [`authorization: Bearer ${token}`, 'content-type: application/json', ...lines],
      body,
    ),
  );

describe('finding 2: provider keys', () => {
  it.each([
    ['CR/LF', 'sk-prov-d-good\r\nx-injected: 1'],
    ['NUL', 'sk-prov-d-good\u0000tail'],
    ['an emoji', 'sk-prov-d-good-🔑-tail'],
    ['ü (sent as Latin-1 otherwise)', 'sk-prov-d-güt-tail'],
    ['a space inside', 'sk-prov-d good tail'],
  ])(
    'a key holding %s is refused when saved (400, a clear field message), the saved key stays and the provider keeps working',
    async (_, key) => {
      const account = await proxy.createAccount('edge-keys');
      const good = await proxy.saveKey(account.token, 'prov-d');
      const answer = await proxy.api('/api/keys/prov-d', { method: 'PUT', token: account.token, body: { key } });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(await answer.json())).toContain('visible ASCII');
      const listed = (await (await proxy.api('/api/keys', { token: account.token })).json()) as {
        keys: Array<{ provider: string; hint: string }>;
      };
      expect(listed.keys.find((k) => k.provider === 'prov-d')?.hint).toBe(`…${good.slice(-4)}`);
      expect((await ask(account.token)).choices[0]?.message).toBeDefined();
    },
  );

  it('a key stored before keys were checked answers a clear 500 in the endpoint’s shape, never a generic one, and is never sent', async () => {
    const account = await proxy.createAccount('edge-stored');
    const sealer = new EnvelopeSealer(LocalKeyWrapper.fromFile(join(proxy.dataDir, 'local-master.key')));
    const secret = await sealer.seal('sk-prov-d-bad\r\nkey-123', { account_id: account.accountId, provider: 'prov-d' });
    await new DynamoProviderKeyStore(tables.clients.doc, tables.tables.accounts).put(account.accountId, {
      provider: 'prov-d',
      label: 'default',
      secret,
      hint: '…-123',
      updatedAt: new Date().toISOString(),
    });
    const calls = upstreamCalls(proxy);
    const error = await failure(ask(account.token));
    expect(error.status).toBe(500);
    expect(error.message).toContain('stored prov-d key is not valid');
    expect(error.message).toContain('PUT /api/keys/prov-d');
    expect(upstreamCalls(proxy)).toBe(calls);
  });
});

describe('finding 3: header values are UTF-8', () => {
  it('x-proxy-user: josé is the row’s label, and a budget set for josé applies to it', async () => {
    const account = await proxy.createAccount('edge-utf8');
    await proxy.saveKey(account.token, 'prov-d');
    const set = await proxy.api(`/api/budgets/requesters/${encodeURIComponent('josé')}`, {
      method: 'PUT',
      token: account.token,
      body: { limit_usd: 0.000001, period: 'total' },
    });
    expect(set.status).toBe(200);
    const first = await post(account.token, [`x-proxy-user: ${utf8Bytes('josé')}`]);
    expect(first.status).toBe(200);
    const [row] = await proxy.waitForRows(account.token, 1);
    expect(row!.requester).toBe('josé');
    // The CSV export and the stats show the same label (they showed `josÃ©`).
    const csv = csvRows(await (await proxy.api('/api/logs.csv', { token: account.token })).text());
    const column = csv[0]!.indexOf('requester');
    expect(csv.slice(1).map((cells) => cells[column])).toEqual(['josé']);
    const stats = (await (await proxy.api('/api/stats', { token: account.token })).json()) as StatsSummary;
    expect(stats.by_requester.map((entry) => entry.requester)).toEqual(['josé']);
    // The row's cost reaches josé's budget, and the next request of josé is refused.
    const spent = await eventually(async () => {
      const list = (await (await proxy.api('/api/budgets', { token: account.token })).json()) as {
        requesters: Array<{ requester: string; spent_usd: number }>;
      };
      const jose = list.requesters.find((entry) => entry.requester === 'josé');
      return jose && jose.spent_usd > 0 ? jose.spent_usd : undefined;
    });
    expect(spent).toBeGreaterThan(0);
    expect((await post(account.token, [`x-proxy-user: ${utf8Bytes('josé')}`])).status).toBe(402);
  });

  it('a header whose bytes are no UTF-8 is refused with 400 in the endpoint’s shape; nothing is sent or stored', async () => {
    const account = await proxy.createAccount('edge-bad-utf8');
    const calls = upstreamCalls(proxy);
    const answer = await post(account.token, ['x-proxy-user: jos\xe9']);
    expect(answer.status).toBe(400);
    expect(expectChatError(answer.body).message).toContain('not valid UTF-8');
    expect(upstreamCalls(proxy)).toBe(calls);
    const logs = (await (await proxy.api('/api/logs', { token: account.token })).json()) as { items: unknown[] };
    expect(logs.items).toEqual([]);
  });
});

describe('finding 6: control and bidirectional characters', () => {
  it.each([
    [
      'model',
      (token: string) =>
        post(
          token,
          [],
          JSON.stringify({
            model: 'plain\u0000\u001b[31mRED\u2028\u202eevil',
            messages: [{ role: 'user', content: 'x' }],
          }),
        ),
    ],
    [
      'model',
      (token: string) =>
        post(token, [], JSON.stringify({ model: 'gpt\u0085\u007fx', messages: [{ role: 'user', content: 'x' }] })),
    ],
    ['x-proxy-user', (token: string) => post(token, [`x-proxy-user: ${utf8Bytes('alice\u202eevil')}`])],
    ['x-proxy-user', (token: string) => post(token, [`x-proxy-user: ${utf8Bytes('bob\u2066x')}`])],
    // The stats' own entry for labels past a day's cap: a caller's label of that name would be counted with them.
    ['x-proxy-user', (token: string) => post(token, ['x-proxy-user: (other)'])],
    [
      'model',
      (token: string) =>
        post(token, [], JSON.stringify({ model: '(other)', messages: [{ role: 'user', content: 'x' }] })),
    ],
  ])(
    'a %s holding one, or naming (other), is refused with 400 in the endpoint’s shape; nothing is sent or stored',
    async (param, send) => {
      const account = await proxy.createAccount('edge-controls');
      const calls = upstreamCalls(proxy);
      const answer = await send(account.token);
      expect(answer.status).toBe(400);
      expect(expectChatError(answer.body).param).toBe(param);
      expect(upstreamCalls(proxy)).toBe(calls);
      const logs = (await (await proxy.api('/api/logs', { token: account.token })).json()) as { items: unknown[] };
      expect(logs.items).toEqual([]);
    },
  );

  it.each(['\u0000', '\u001b[31m', 'a\u202eb', 'x\u2028y', '\u0085', '(other)'])(
    'a requester budget named %j is refused with 400 and not stored',
    async (requester) => {
      const account = await proxy.createAccount('edge-budget-name');
      const answer = await proxy.api(`/api/budgets/requesters/${encodeURIComponent(requester)}`, {
        method: 'PUT',
        token: account.token,
        body: { limit_usd: 5, period: 'month' },
      });
      expect(answer.status).toBe(400);
      const list = (await (await proxy.api('/api/budgets', { token: account.token })).json()) as {
        requesters: unknown[];
      };
      expect(list.requesters).toEqual([]);
    },
  );
});

describe('finding 7: two different proxy tokens in one request', () => {
  const messages = (headers: Record<string, string>) =>
    fetch(`${proxy.proxyBase}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 8, messages: [{ role: 'user', content: 'two' }] }),
    });

  it('x-api-key: token X with Authorization: Bearer token V is a 401 in the Messages shape; neither is charged', async () => {
    const x = await proxy.createAccount('edge-token-x');
    const v = await proxy.createAccount('edge-token-v');
    for (const account of [x, v]) await proxy.saveKey(account.token, 'prov-a');
    const calls = upstreamCalls(proxy);
    const answer = await messages({ 'x-api-key': x.token, authorization: `Bearer ${v.token}` });
    expect(answer.status).toBe(401);
    const text = await answer.text();
    expect(expectMessagesError(text).message).toContain('Conflicting credentials');
    expect([x.token, v.token].filter((token) => text.includes(token))).toEqual([]);
    expect(upstreamCalls(proxy)).toBe(calls);
    for (const account of [x, v]) {
      const logs = (await (await proxy.api('/api/logs', { token: account.token })).json()) as { items: unknown[] };
      expect(logs.items).toEqual([]);
    }
    // The same token in both headers is one credential, and the Anthropic SDK's own request passes.
    expect((await messages({ 'x-api-key': x.token, authorization: `Bearer ${x.token}` })).status).toBe(200);
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: x.token, maxRetries: 0 });
    const answered = await client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'one token' }],
    });
    expect(answered.type).toBe('message');
  });
});
