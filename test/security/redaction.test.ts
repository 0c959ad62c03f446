/**
 * One redaction stage covers every credential a request carried — the stored
 * provider key, the caller's own key (pass-through) and the proxy token — in
 * every byte the provider sends back: JSON error bodies and error events inside
 * streams, in both API styles, even when the provider splits a key across two
 * writes, and every key of a pool. The row's `error` and every table are free of them too.
 */
import { createHash } from 'node:crypto';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy, type CallResult } from '../reliability/support/requests';
import { rowOf } from '../reliability/support/rows';
import {
  startScriptedUpstream,
  type ScriptedRequest,
  type ScriptedUpstream,
} from '../reliability/support/scripted-upstream';
import { tableText, tokenSecret } from './support/observed';

const TABLE_PREFIX = `red${Date.now().toString(36)}-`;
const ownKey = (provider: ProviderId) =>
  `${provider}-own-key-${createHash('sha256').update(provider).digest('hex').slice(0, 24)}`;

let upstream: ScriptedUpstream;
let proxy: ProxyServer;
/** The keys of the pool test's account. */
const poolKeys: string[] = [];

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startProxy({
    tablePrefix: TABLE_PREFIX,
    env: { UPSTREAM_BASE_URL_PROV_A: upstream.url, UPSTREAM_BASE_URL_PROV_B: `${upstream.url}/v1` },
  });
  for (const provider of ['prov-a', 'prov-b'] as const) proxy.secrets.add(ownKey(provider));
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

/** Every credential the request carried, as the provider saw or could have seen it. */
function credentialsOf(request: ScriptedRequest): string[] {
  const header = String(request.headers['x-api-key'] ?? request.headers.authorization ?? '').replace('Bearer ', '');
  return [header, proxy.account.token, tokenSecret(proxy.account.token)];
}

/** The text a careless provider would send: each credential, the first one split across two writes. */
async function quoteAll(
  write: (chunk: string) => Promise<void>,
  before: string,
  after: string,
  request: ScriptedRequest,
): Promise<void> {
  const [key, token, secret] = credentialsOf(request);
  await write(`${before}key ${key!.slice(0, 9)}`);
  await new Promise((resolve) => setTimeout(resolve, 20));
  await write(`${key!.slice(9)}, token ${token}, secret ${secret}${after}`);
}

type Mode = 'stored' | 'pass-through';

async function call(provider: 'prov-a' | 'prov-b', mode: Mode, stream: boolean): Promise<CallResult> {
  return callProxy(proxy, {
    provider,
    token: proxy.account.token,
    providerKey: mode === 'pass-through' ? ownKey(provider) : undefined,
    stream,
    prompt: `redact ${provider} ${mode} ${stream}`,
  });
}

function secretsFor(provider: 'prov-a' | 'prov-b', mode: Mode): string[] {
  return [
    mode === 'stored' ? proxy.storedKeys[provider] : ownKey(provider),
    proxy.account.token,
    tokenSecret(proxy.account.token),
  ];
}

async function expectClean(
  provider: 'prov-a' | 'prov-b',
  mode: Mode,
  result: CallResult,
  redactions: number,
): Promise<void> {
  for (const secret of secretsFor(provider, mode))
    expect(result.text.includes(secret) ? secret.slice(0, 10) : 'absent').toBe('absent');
  expect(result.text.split('[redacted]').length - 1).toBe(redactions);
  const row = await rowOf(proxy, proxy.account.token, result.requestId);
  expect(row.error).toContain('[redacted]');
  for (const secret of secretsFor(provider, mode))
    expect(String(row.error).includes(secret) ? secret.slice(0, 10) : 'absent').toBe('absent');
}

describe.each(['stored', 'pass-through'] as const)('%s mode', (mode) => {
  test('a JSON error body quoting the credentials (chat style)', async () => {
    upstream.next({
      status: 401,
      contentType: 'application/json',
      body: (write, request) =>
        quoteAll(
          write,
          '{"error":{"message":"Incorrect API key provided: ',
          '","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}',
          request,
        ),
    });
    const result = await call('prov-b', mode, false);
    expect(result.status).toBe(401);
    expect(JSON.parse(result.text).error.code).toBe('invalid_api_key');
    await expectClean('prov-b', mode, result, 3);
  });

  test('a JSON error body quoting the credentials (messages style)', async () => {
    upstream.next({
      status: 400,
      contentType: 'application/json',
      body: (write, request) =>
        quoteAll(write, '{"type":"error","error":{"type":"invalid_request_error","message":"bad ', '"}}', request),
    });
    const result = await call('prov-a', mode, false);
    expect(result.status).toBe(400);
    expect(JSON.parse(result.text).error.type).toBe('invalid_request_error');
    await expectClean('prov-a', mode, result, 3);
  });

  test('an error event inside a 200 stream (chat style)', async () => {
    upstream.next({
      status: 200,
      contentType: 'text/event-stream',
      async body(write, request) {
        await write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'model-b', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] })}\n\n`,
        );
        await quoteAll(
          write,
          'data: {"error":{"message":"upstream failed for ',
          '","type":"server_error","param":null,"code":null}}\n\n',
          request,
        );
      },
    });
    const result = await call('prov-b', mode, true);
    expect(result.status).toBe(200);
    expect(result.text).toContain('"content":"Hi"');
    await expectClean('prov-b', mode, result, 3);
  });

  test('an error event inside a 200 stream (messages style)', async () => {
    upstream.next({
      status: 200,
      contentType: 'text/event-stream',
      async body(write, request) {
        await write(
          `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'model-a', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n`,
        );
        await quoteAll(
          write,
          'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"failed for ',
          '"}}\n\n',
          request,
        );
      },
    });
    const result = await call('prov-a', mode, true);
    expect(result.status).toBe(200);
    expect(result.text).toContain('event: error');
    await expectClean('prov-a', mode, result, 3);
  });
});

test('a pool: every key of it is cut out of what the provider sends back, the row too', async () => {
  const account = await proxy.createAccount('redacted pool');
  const first = await proxy.saveKey(account.token, 'prov-b');
  const second = `prov-b-pool-key-${createHash('sha256').update('second').digest('hex').slice(0, 24)}`;
  proxy.secrets.add(second);
  poolKeys.push(first, second);
  const saved = await proxy.api('/api/keys/prov-b/backup', {
    method: 'PUT',
    token: account.token,
    body: { key: second },
  });
  expect(saved.status).toBe(200);
  // The first key is throttled; the second key's answer quotes both.
  upstream.next({
    status: 429,
    contentType: 'application/json',
    headers: { 'retry-after': '60' },
    body: (write) => write(`{"error":{"message":"slow down ${first}"}}`),
  });
  upstream.next({
    status: 400,
    contentType: 'application/json',
    body: (write) =>
      write(
        `{"error":{"message":"keys ${first} and ${second}","type":"invalid_request_error","param":null,"code":null}}`,
      ),
  });
  const result = await callProxy(proxy, { provider: 'prov-b', token: account.token, prompt: 'redact a pool' });
  expect(result.status).toBe(400);
  expect(result.text.split('[redacted]').length - 1).toBe(2);
  const row = await rowOf(proxy, account.token, result.requestId);
  expect(row.error).toContain('[redacted]');
  for (const secret of [first, second]) {
    expect(result.text.includes(secret) ? secret.slice(0, 10) : 'absent').toBe('absent');
    expect(JSON.stringify(row).includes(secret) ? secret.slice(0, 10) : 'absent').toBe('absent');
  }
});

test('no credential of these requests is in any table', async () => {
  const tables = await tableText(TABLE_PREFIX);
  const everything = Object.values(tables).flat().join('\n');
  expect(everything).toContain('[redacted]');
  for (const secret of [
    ...Object.values(proxy.storedKeys),
    ...poolKeys,
    ownKey('prov-a'),
    ownKey('prov-b'),
    proxy.account.token,
    tokenSecret(proxy.account.token),
  ]) {
    expect(everything.includes(secret) ? secret.slice(0, 10) : 'absent').toBe('absent');
  }
});
