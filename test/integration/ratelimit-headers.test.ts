/**
 * Rate-limit headers as a client reads them (docs/api.md, "Response headers"): the provider's own
 * `x-ratelimit-*` headers (its limits on the provider key) reach the client exactly as the provider
 * sent them, JSON and stream, through the official SDKs and raw HTTP; the proxy's own limit on the
 * proxy token travels as `x-proxy-ratelimit-*`, and never under the provider's names.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { TEST_MODELS } from '../support/sdk-clients';
import { callProxy } from '../reliability/support/requests';

let local: InProcessProxy;
beforeAll(async () => {
  local = await startInProcessProxy();
});
afterAll(() => local?.close());

/** What a provider sends about its own limits (OpenAI's and Groq's names, and the plain ones some providers use). */
const PROVIDER_HEADERS = {
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-requests': '5',
  'x-ratelimit-reset-requests': '6m0s',
  'x-ratelimit-limit-tokens': '2000000',
  'x-ratelimit-remaining-tokens': '1999990',
  'x-ratelimit-limit': '500',
  'x-ratelimit-remaining': '5',
  'x-ratelimit-reset': '1714000000',
};

/** The provider's headers are the provider's, and the proxy's own state is under its own names: a fresh token's first request. */
function expectBoth(headers: Headers, used: number): void {
  for (const [name, value] of Object.entries(PROVIDER_HEADERS))
    expect({ name, value: headers.get(name) }).toEqual({ name, value });
  expect(headers.get('x-proxy-ratelimit-limit')).toBe('100');
  expect(headers.get('x-proxy-ratelimit-remaining')).toBe(String(100 - used));
  expect(Number(headers.get('x-proxy-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
}

describe.each([false, true])('stream: %s', (stream) => {
  test('through the Anthropic SDK', async () => {
    const token = await local.createAccount(`anthropic-${stream}`);
    local.fakes.fakes['prov-a'].next({ headers: PROVIDER_HEADERS });
    const client = new Anthropic({ baseURL: `${local.proxyBase}/prov-a`, apiKey: token, maxRetries: 0 });
    const request = {
      model: TEST_MODELS['prov-a'],
      max_tokens: 16,
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    const { response } = stream
      ? await client.messages.create({ ...request, stream: true }).withResponse()
      : await client.messages.create(request).withResponse();
    expectBoth(response.headers, 1);
  });

  test('through the OpenAI SDK', async () => {
    const token = await local.createAccount(`openai-${stream}`);
    local.fakes.fakes['prov-b'].next({ headers: PROVIDER_HEADERS });
    const client = new OpenAI({ baseURL: `${local.proxyBase}/prov-b/v1`, apiKey: token, maxRetries: 0 });
    const request = { model: TEST_MODELS['prov-b'], messages: [{ role: 'user' as const, content: 'hi' }] };
    const { response } = stream
      ? await client.chat.completions.create({ ...request, stream: true }).withResponse()
      : await client.chat.completions.create(request).withResponse();
    expectBoth(response.headers, 1);
  });

  test('over raw HTTP, after a few requests', async () => {
    const token = await local.createAccount(`raw-${stream}`);
    for (let i = 0; i < 3; i++) await callProxy(local, { provider: 'prov-e', token, stream });
    local.fakes.fakes['prov-e'].next({ headers: PROVIDER_HEADERS });
    const result = await callProxy(local, { provider: 'prov-e', token, stream });
    expect(result.status).toBe(200);
    expectBoth(result.headers, 4);
  });
});

test("a provider's own 429 reaches the client as sent, its Retry-After and limits included; the proxy's own count is beside it", async () => {
  const token = await local.createAccount('provider-429');
  // A wait longer than the proxy's own retry would take (docs/fallbacks.md): the 429 goes back at once.
  local.fakes.fakes['prov-b'].next({ status: 429, headers: { ...PROVIDER_HEADERS, 'retry-after': '70' } });
  const result = await callProxy(local, { provider: 'prov-b', token });
  expect(result.status).toBe(429);
  expect(result.headers.get('retry-after')).toBe('70');
  expectBoth(result.headers, 1);
});

test('a provider that sends no limits: the client sees none under its names, and the proxy’s own under x-proxy-ratelimit-*', async () => {
  const token = await local.createAccount('no-provider-limits');
  const result = await callProxy(local, { provider: 'prov-d', token });
  expect(result.status).toBe(200);
  expect([...result.headers.keys()].filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
  expect(result.headers.get('x-proxy-ratelimit-remaining')).toBe('99');
});
