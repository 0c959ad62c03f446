/**
 * Small input gaps a newcomer meets on the first day: an empty conversation is refused before any
 * upstream call, validation messages say what was expected, a cursor the API never returned is a
 * 400 (not page one again), and the 404 for an unknown proxy path lists the paths that exist.
 */
import { endpointPaths } from '../../lambda/providers/registry';
import { callProxy, expectEndpointError, upstreamCalls } from '../reliability/support/requests';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => proxy?.stop());

const base = (provider: 'prov-a' | 'prov-b') => ({
  model: TEST_MODELS[provider],
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hi' }],
});

test.each([
  ['prov-a', { messages: [] }, 'messages: must not be empty'],
  ['prov-b', { messages: [] }, 'messages: must not be empty'],
  ['prov-a', { model: 123 }, 'model: expected a string'],
  ['prov-b', { model: 123 }, 'model: expected a string'],
  ['prov-a', { max_tokens: 'many' }, 'max_tokens: expected a number'],
  ['prov-a', { max_tokens: 1.5 }, 'max_tokens: expected an integer'],
  ['prov-a', { max_tokens: 0 }, 'max_tokens: must be greater than 0'],
  ['prov-b', { messages: 'hello' }, 'messages: expected an array'],
  ['prov-b', { messages: [{ role: 'user', content: 5 }] }, 'messages.0.content: expected a string, an array or null'],
  ['prov-b', { stream: 'yes' }, 'stream: expected a boolean or null'],
] as const)('%s %j: 400 "%s", never forwarded', async (provider, change, message) => {
  const before = upstreamCalls(proxy);
  const result = await callProxy(proxy, {
    provider,
    token: proxy.account.token,
    body: { ...base(provider), ...change },
  });
  expect(result.status).toBe(400);
  expect(expectEndpointError(provider, result.text)).toBe(message);
  expect(result.text).not.toContain('Invalid input');
  expect(upstreamCalls(proxy)).toBe(before);
});

test('an unreadable cursor on /api/logs is a 400 naming the parameter; next_cursor as given still pages', async () => {
  for (let i = 0; i < 3; i++)
    expect(
      (await callProxy(proxy, { provider: 'prov-b', token: proxy.account.token, prompt: `page ${i}` })).status,
    ).toBe(200);
  await proxy.waitForRows(proxy.account.token, 3);
  for (const cursor of ['garbage', 'bm90LWEta2V5', '%%%']) {
    const response = await proxy.api(`/api/logs?limit=1&cursor=${encodeURIComponent(cursor)}`, {
      token: proxy.account.token,
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toMatch(/cursor/);
  }
  const first = (await (await proxy.api('/api/logs?limit=1', { token: proxy.account.token })).json()) as {
    items: Array<{ id: string }>;
    next_cursor: string;
  };
  const second = await proxy.api(`/api/logs?limit=1&cursor=${encodeURIComponent(first.next_cursor)}`, {
    token: proxy.account.token,
  });
  expect(second.status).toBe(200);
  expect(((await second.json()) as { items: Array<{ id: string }> }).items[0]?.id).not.toBe(first.items[0]?.id);
});

test('the 404 for an unknown proxy path lists every endpoint from the provider registry', async () => {
  const response = await fetch(`${proxy.proxyBase}/prov-x/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(base('prov-b')),
  });
  expect(response.status).toBe(404);
  const message = expectEndpointError('prov-b', await response.text());
  expect(message).toContain('POST /api/proxy/prov-b/v1/chat/completions');
  expect(message).toContain('POST /api/proxy/v1/messages');
  for (const entry of endpointPaths()) expect(message).toContain(entry.replace(' ', ' /api/proxy'));
});
