import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { UPSTREAM_TIMEOUT_MS: '1000' } });
});
afterAll(async () => {
  await proxy.stop();
});

const openai = (apiKey: string, headers: Record<string, string> = {}, provider = 'prov-b') =>
  new OpenAI({ baseURL: `${proxy.proxyBase}/${provider}/v1`, apiKey, maxRetries: 0, defaultHeaders: headers });
const anthropic = (apiKey: string, headers: Record<string, string> = {}) =>
  new Anthropic({ baseURL: proxy.proxyBase, apiKey, maxRetries: 0, defaultHeaders: headers });
const chat = (client: OpenAI, body: Record<string, unknown> = {}) =>
  client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
    ...body,
  } as never);
const message = (client: Anthropic, body: Record<string, unknown> = {}) =>
  client.messages.create({
    model: 'claude-haiku-4-5-20251001',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'hi' }],
    ...body,
  } as never);

async function raw(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const response = await fetch(proxy.url + path, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body,
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

describe('authentication (401/403)', () => {
  it('a missing, malformed or unknown credential is 401 and the SDKs raise AuthenticationError', async () => {
    const unknown = proxy.account.token.replace(/_[A-Za-z0-9]{32}$/, `_${'A'.repeat(32)}`);
    for (const key of ['sk-proxy-nonsense', unknown]) {
      await expect(chat(openai(key))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      await expect(message(anthropic(key))).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    }
    const missing = await raw('/api/proxy/prov-b/v1/chat/completions', { body: '{}' });
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body).error.type).toBe('authentication_error');
    const missingA = await raw('/api/proxy/v1/messages', { body: '{}' });
    expect(JSON.parse(missingA.body)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('pass-through without x-proxy-token is 401', async () => {
    const error = await chat(openai('my-own-provider-key-123')).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.message).toContain('x-proxy-token');
  });

  it('a revoked token stops working at once', async () => {
    const account = await proxy.createAccount('revoked');
    await proxy.saveKey(account.token, 'prov-b');
    await expect(chat(openai(account.token))).resolves.toBeDefined();
    const revoke = await proxy.api(`/api/admin/tokens/${account.tokenId}`, { method: 'DELETE' });
    expect(revoke.status).toBe(204);
    const error = await chat(openai(account.token)).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.message).toContain('revoked');
  });

  it('a token without the proxy scope is 403 (PermissionDeniedError)', async () => {
    const response = await proxy.api(`/api/admin/accounts/${proxy.account.accountId}/tokens`, {
      body: { name: 'manage only', scopes: ['manage'] },
    });
    const { token } = (await response.json()) as { token: string };
    proxy.secrets.add(token);
    await expect(chat(openai(token))).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(message(anthropic(token))).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
  });
});

describe('validation (400)', () => {
  it.each([
    ['model', { model: undefined }],
    ['messages', { messages: undefined }],
    ['messages.0.role', { messages: [{ content: 'x' }] }],
    ['max_tokens', { max_tokens: 'ten' }],
  ])('chat completions: a bad %s is a 400 naming the field', async (field, patch) => {
    const error = await chat(openai(proxy.account.token), patch).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param ?? '').toBe(field);
    expect(error.message).toContain(field);
  });

  it.each([
    ['max_tokens', { max_tokens: undefined }],
    ['max_tokens', { max_tokens: 0 }],
    ['model', { model: 7 }],
    ['messages', { messages: 'hello' }],
  ])('messages: a bad %s is a 400 naming the field', async (field, patch) => {
    const error = await message(anthropic(proxy.account.token), patch).catch((e) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(error.message).toContain(field);
  });

  it('accepts content as an array of parts and passes unknown fields through untouched', async () => {
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    await chat(openai(proxy.account.token), {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      temperature: 0.2,
      some_future_field: { nested: [1, 2] },
    });
    expect(fake.requests[before].json).toMatchObject({ temperature: 0.2, some_future_field: { nested: [1, 2] } });
  });

  it('invalid JSON is a 400', async () => {
    const response = await raw('/api/proxy/prov-b/v1/chat/completions', {
      headers: { authorization: `Bearer ${proxy.account.token}` },
      body: '{"model":',
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error.message).toMatch(/JSON/);
  });

  it('stored mode without a saved key is a 400 that says which provider and how to add one', async () => {
    const account = await proxy.createAccount('no keys');
    const error = await chat(openai(account.token, {}, 'prov-d')).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain('prov-d');
    expect(error.message).toContain('/api/keys/prov-d');
  });
});

describe('routing (404/405/413)', () => {
  it('an unknown proxy path is 404 and a non-POST method is 405', async () => {
    const unknown = await raw('/api/proxy/prov-z/v1/chat/completions', {
      headers: { authorization: `Bearer ${proxy.account.token}` },
      body: '{}',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-proxy-request-id')).toBeTruthy();
    const get = await raw('/api/proxy/prov-b/v1/chat/completions', { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const getA = await raw('/api/proxy/messages', { method: 'PUT', body: '{}' });
    expect(JSON.parse(getA.body)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('every documented path answers, with and without v1', async () => {
    const paths = [
      '/api/proxy/v1/messages',
      '/api/proxy/messages',
      ...['b', 'c', 'd', 'e'].flatMap((p) => [
        `/api/proxy/prov-${p}/v1/chat/completions`,
        `/api/proxy/prov-${p}/chat/completions`,
      ]),
    ];
    for (const path of paths) {
      const body = path.includes('messages')
        ? { model: 'claude-haiku-4-5-20251001', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }
        : { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
      const headers: Record<string, string> = path.includes('messages')
        ? { 'x-api-key': proxy.account.token }
        : { authorization: `Bearer ${proxy.account.token}` };
      const response = await raw(path, { headers, body: JSON.stringify(body) });
      expect([path, response.status]).toEqual([path, 200]);
    }
  });

  it('a body over 6 MB is 413', async () => {
    const big = JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x'.repeat(6 * 1024 * 1024) }],
    });
    const response = await raw('/api/proxy/prov-b/v1/chat/completions', {
      headers: { authorization: `Bearer ${proxy.account.token}` },
      body: big,
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error.type).toBe('invalid_request_error');
  });
});

describe('upstream failures (4xx/5xx passed through, 502, 504)', () => {
  it('passes a provider error through unchanged and logs it with zero tokens and its message', async () => {
    const fake = proxy.fakes.fakes['prov-b'];
    fake.next({
      status: 429,
      errorMessage: 'Slow down please',
      headers: { 'retry-after': '7', 'x-request-id': 'req_upstream_1' },
    });
    const error = await chat(openai(proxy.account.token, { 'x-proxy-user': 'err-test' })).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.message).toContain('Slow down please');
    expect(error.headers.get('retry-after')).toBe('7');
    expect(error.headers.get('x-request-id')).toBe('req_upstream_1');
    const [row] = await proxy.rowsFor(proxy.account.token, [error.headers.get('x-proxy-request-id')]);
    expect(row).toMatchObject({
      status_code: 429,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      error: 'Slow down please',
      requester: 'err-test',
    });
  });

  it('passes a messages-style overloaded error through', async () => {
    proxy.fakes.fakes['prov-a'].next({ status: 529 });
    const error = await message(anthropic(proxy.account.token)).catch((e) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error.status).toBe(529);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it('no response headers within UPSTREAM_TIMEOUT_MS is a 504', async () => {
    proxy.fakes.fakes['prov-b'].next({ hang: true });
    const error = await chat(openai(proxy.account.token)).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(504);
    const [row] = await proxy.rowsFor(proxy.account.token, [error.headers.get('x-proxy-request-id')]);
    expect(row).toMatchObject({ status_code: 504, input_tokens: 0, cost_usd: 0 });
    expect(row.error).toMatch(/did not respond/);
  });

  it('an upstream that resets before its headers is a 502', async () => {
    // Every attempt: a reset on a kept-alive connection is resent once on a fresh one, which must reset too.
    proxy.fakes.fakes['prov-a'].always({ resetBeforeHeaders: true });
    const error = await message(anthropic(proxy.account.token)).catch((e) => e);
    proxy.fakes.fakes['prov-a'].always(undefined);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });
});

describe('rate limit (429)', () => {
  // In-process with the proxy's clock held still: every request below falls in the same minute, wherever the wall clock is.
  let local: InProcessProxy;
  beforeAll(async () => {
    const at = Date.now();
    local = await startInProcessProxy({ now: () => at });
  });
  afterAll(() => local?.close());

  it('admits 100 requests a minute per token; the 101st is 429 with Retry-After: 60', async () => {
    const token = await local.createAccount('rate');
    const client = new OpenAI({ baseURL: `${local.proxyBase}/prov-e/v1`, apiKey: token, maxRetries: 0 });
    const send = () =>
      chat(client).then(
        () => 'ok',
        (e) => e,
      );
    const results: unknown[] = [];
    for (let batch = 0; batch < 10; batch++) results.push(...(await Promise.all(Array.from({ length: 10 }, send))));
    expect(results.filter((r) => r !== 'ok').map(String)).toEqual([]);
    const over = await send();
    expect(over).toBeInstanceOf(OpenAI.RateLimitError);
    expect((over as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('60');
    expect((over as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-proxy-ratelimit-remaining')).toBe('0');
    // Another token of another account is unaffected.
    await expect(
      chat(new OpenAI({ baseURL: `${local.proxyBase}/prov-e/v1`, apiKey: local.token, maxRetries: 0 })),
    ).resolves.toBeDefined();
  });
});

describe('headers on every response', () => {
  it('carries the request id, version and rate-limit headers', async () => {
    const { data, response } = await openai(proxy.account.token)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices.length).toBeGreaterThan(0);
    expect(response.headers.get('x-proxy-request-id')).toBeTruthy();
    expect(response.headers.get('x-proxy-version')).toMatch(/^\d+\.\d+\.\d+/);
    expect(Number(response.headers.get('x-proxy-ratelimit-limit'))).toBe(100);
    expect(Number(response.headers.get('x-proxy-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    const health = await fetch(`${proxy.url}/api/health`);
    expect(await health.json()).toEqual({ status: 'ok', version: response.headers.get('x-proxy-version') });
    expect(health.headers.get('x-proxy-request-id')).toBeTruthy();
  });
});
