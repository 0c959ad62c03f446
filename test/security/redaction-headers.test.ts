/**
 * A provider that echoes a credential in a response header does not hand it to the client
 * (SECURITY.md, "What is scrubbed where"): every provider and Bedrock, stored and pass-through
 * mode, a header quoting the credential the provider received, the proxy token, its secret part,
 * and for Bedrock in stored mode the signature material (session token, signature, key id). The
 * header stays, with `[redacted]` where the credential was (a header whose name holds one is
 * dropped); every other header arrives unchanged.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { ProviderId } from '../fakes/start-fakes';
import { credentialHeaders, ENDPOINT, PROVIDERS, requestBody } from '../reliability/support/requests';
import {
  startScriptedUpstream,
  type ScriptedRequest,
  type ScriptedUpstream,
} from '../reliability/support/scripted-upstream';
import { BEDROCK_MODEL } from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { tokenSecret } from './support/observed';

type Mode = 'stored' | 'pass-through';
const ownKey = (provider: string) =>
  `${provider}-own-key-${createHash('sha256').update(`hdr-${provider}`).digest('hex').slice(0, 24)}`;

let upstream: ScriptedUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  const env: Record<string, string> = { UPSTREAM_BASE_URL_BEDROCK: upstream.url, RATE_LIMIT_PER_MINUTE: '1000' };
  for (const provider of PROVIDERS) env[`UPSTREAM_BASE_URL_${provider.toUpperCase().replace('-', '_')}`] = upstream.url;
  proxy = await startProxy({ env });
  for (const provider of [...PROVIDERS, 'bedrock']) proxy.secrets.add(ownKey(provider));
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

/** Every credential the provider received: a key, or (Bedrock, stored) the signature material. */
function received(request: ScriptedRequest): string[] {
  const authorization = String(request.headers.authorization ?? '');
  const apiKey = request.headers['x-api-key'];
  if (apiKey) return [String(apiKey)];
  if (authorization.startsWith('Bearer ')) return [authorization.slice(7)];
  const keyId = /Credential=([^/]+)\//.exec(authorization)![1]!;
  const signature = /Signature=([0-9a-f]+)/.exec(authorization)![1]!;
  return [String(request.headers['x-amz-security-token']), signature, keyId];
}

/** The headers a careless provider sends back, one credential in each, beside one that quotes none. */
function echoed(request: ScriptedRequest): Record<string, string> {
  const headers: Record<string, string> = {
    'x-request-id': 'req_0123456789',
    'x-echo-token': proxy.account.token,
    'x-echo-secret': `secret=${tokenSecret(proxy.account.token)}; path=/`,
  };
  received(request).forEach((credential, index) => (headers[`x-echo-received-${index}`] = `got ${credential} ok`));
  // A name can hold a credential too (token characters only): such a header is dropped.
  headers[`x-${proxy.account.token}`] = '1';
  const [first] = received(request);
  if (/^[\w.-]+$/.test(first!)) headers[`x-key-${first}`] = '1';
  return headers;
}

const JSON_BODY: Record<'messages' | 'chat' | 'converse', unknown> = {
  messages: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content: [{ type: 'text', text: 'hi' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 5, output_tokens: 3 },
  },
  chat: {
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'model-x',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
  },
  converse: {
    output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
    metrics: { latencyMs: 9 },
  },
};

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

function rawCall(url: string, headers: Record<string, string>, body: unknown): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function call(provider: ProviderId | 'bedrock', mode: Mode): Promise<RawAnswer> {
  const key = mode === 'pass-through' ? ownKey(provider) : undefined;
  if (provider === 'bedrock') {
    const headers = {
      authorization: `Bearer ${key ?? proxy.account.token}`,
      ...(key ? { 'x-proxy-token': proxy.account.token } : {}),
    };
    return rawCall(`${proxy.proxyBase}/bedrock/model/${BEDROCK_MODEL}/converse`, headers, {
      messages: [{ role: 'user', content: [{ text: `headers ${mode}` }] }],
    });
  }
  return rawCall(
    proxy.proxyBase + ENDPOINT[provider],
    credentialHeaders(provider, proxy.account.token, key),
    requestBody(provider, `headers ${provider} ${mode}`),
  );
}

const cases = [...PROVIDERS, 'bedrock' as const].flatMap((provider) =>
  (['stored', 'pass-through'] as const).map((mode) => [provider, mode] as const),
);

test.each(cases)(
  '%s, %s mode: a response header echoing a credential reaches the client with [redacted] in its place',
  async (provider, mode) => {
    let credentials: string[] = [];
    let sent: Record<string, string> = {};
    upstream.next({
      status: 200,
      contentType: 'application/json',
      headers(req) {
        credentials = received(req);
        sent = echoed(req);
        return sent;
      },
      async body(write) {
        await write(
          JSON.stringify(JSON_BODY[provider === 'bedrock' ? 'converse' : provider === 'prov-a' ? 'messages' : 'chat']),
        );
      },
    });
    const answer = await call(provider, mode);
    expect(answer.status).toBe(200);
    expect(credentials).toHaveLength(provider === 'bedrock' && mode === 'stored' ? 3 : 1);
    if (mode === 'pass-through') expect(credentials).toEqual([ownKey(provider)]);
    const secrets = [...credentials, proxy.account.token, tokenSecret(proxy.account.token)];
    // Header names arrive lower-cased: a credential is looked for in that form too.
    const all = JSON.stringify(answer.headers).toLowerCase();
    expect(
      secrets.filter((secret) => all.includes(secret.toLowerCase())).map((secret) => `${secret.slice(0, 12)}…`),
    ).toEqual([]);
    const dropped = Object.keys(sent).filter((name) => name.startsWith('x-sk-proxy-') || name.startsWith('x-key-'));
    expect(dropped.length).toBeGreaterThan(0);
    for (const name of dropped) expect(answer.headers).not.toHaveProperty(name.toLowerCase());
    expect(answer.headers).toMatchObject({
      'x-request-id': 'req_0123456789',
      'x-echo-token': '[redacted]',
      'x-echo-secret': 'secret=[redacted]; path=/',
    });
    credentials.forEach((_, index) => expect(answer.headers[`x-echo-received-${index}`]).toBe('got [redacted] ok'));
  },
);

test('a content-encoding that is no coding’s name (here the key the provider received) is not quoted: not in the 502, its row or the log', async () => {
  let key = '';
  upstream.next({
    status: 200,
    contentType: 'application/json',
    headers(req) {
      key = received(req)[0]!;
      return { 'content-encoding': `x-${key}` };
    },
    async body(write) {
      await write('opaque');
    },
  });
  const response = await fetch(proxy.proxyBase + ENDPOINT['prov-b'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', proxy.account.token) },
    body: JSON.stringify(requestBody('prov-b', 'coding')),
  });
  const text = await response.text();
  expect(response.status).toBe(502);
  expect(JSON.parse(text).error.message).toMatch(
    /^The upstream provider answered in a content-encoding, which the proxy cannot decode/,
  );
  const [row] = await proxy.rowsFor(proxy.account.token, [response.headers.get('x-proxy-request-id')!]);
  expect(String(row!.error)).toMatch(/cannot decode/);
  // Lower-cased, as the proxy reads codings, and in part: none of it reaches anyone.
  const seen = `${text}\n${JSON.stringify(row)}\n${proxy.output()}`.toLowerCase();
  expect(key.length).toBeGreaterThan(16);
  expect(seen.includes(key.toLowerCase().slice(0, 16))).toBe(false);
});
