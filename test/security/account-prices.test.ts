import OpenAI from 'openai';
import { expectManagementError } from '../reliability/support/requests';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/**
 * Account prices are the account's own: another account neither lists nor is charged by them.
 * What `PUT /api/prices/{model}` refuses, it refuses with a 400 in the management API's shape
 * naming the field: a pattern with a `*` anywhere but its end, control and bidirectional
 * characters, rates that are no price, a `priced_as` the price list doesn't know, both at once.
 */
let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});

const put = (token: string, model: string, body: unknown) =>
  proxy.api(`/api/prices/${encodeURIComponent(model)}`, { method: 'PUT', token, body });

describe('account prices are isolated', () => {
  it("another account doesn't see, change or use them", async () => {
    const owner = await proxy.createAccount('prices-owner');
    const stranger = await proxy.createAccount('prices-stranger');
    await proxy.saveKey(stranger.token, 'prov-b');
    expect((await put(owner.token, 'ft:gpt-4o:owner::one', { input: 2, output: 6 })).status).toBe(200);

    const listed = (await (await proxy.api('/api/prices', { token: stranger.token })).json()) as { prices: unknown[] };
    expect(listed.prices).toEqual([]);
    const deleted = await proxy.api(`/api/prices/${encodeURIComponent('ft:gpt-4o:owner::one')}`, {
      method: 'DELETE',
      token: stranger.token,
    });
    expect(deleted.status).toBe(404);
    expect(expectManagementError(await deleted.text()).code).toBe('not_found');

    proxy.fakes.fakes['prov-b'].next({
      usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const client = new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: stranger.token, maxRetries: 0 });
    const answer = await client.chat.completions
      .create({ model: 'ft:gpt-4o:owner::one', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const [row] = await proxy.rowsFor(stranger.token, [answer.response.headers.get('x-proxy-request-id')!]);
    expect(row).toMatchObject({ priced: false, cost_nanos: 0 });
    expect(row.price_source).toBeUndefined();

    const owned = (await (await proxy.api('/api/prices', { token: owner.token })).json()) as { prices: unknown[] };
    expect(owned.prices).toHaveLength(1);
  });

  it('the API needs a signed-in token', async () => {
    const response = await proxy.api('/api/prices');
    expect(response.status).toBe(401);
    expectManagementError(await response.text());
  });
});

describe('bad prices are refused with a 400 naming the field', () => {
  const cases: Array<[string, string, unknown, string]> = [
    ['a star inside', 'ft:*:acme', { input: 1, output: 1 }, 'model'],
    ['a star alone', '*', { input: 1, output: 1 }, 'model'],
    ['a control character', 'model\u0007x', { input: 1, output: 1 }, 'model'],
    ['a bidirectional override', 'model\u202ex', { input: 1, output: 1 }, 'model'],
    ['a pattern too long', `m${'x'.repeat(600)}`, { input: 1, output: 1 }, 'model'],
    ['no output price', 'my-model', { input: 1 }, 'output'],
    ['a negative price', 'my-model', { input: -1, output: 1 }, 'input'],
    ['a price as text', 'my-model', { input: '1', output: 1 }, 'input'],
    ['dollars per token, not per million', 'my-model', { input: 1, output: 1e6 }, 'output'],
    ['an unknown field', 'my-model', { input: 1, output: 1, cache_write_1h: 2 }, 'cache_write_1h'],
    ['an unknown priced_as', 'my-model', { priced_as: 'no-such-model-anywhere' }, 'priced_as'],
    ['priced_as with prices', 'my-model', { priced_as: 'gpt-4o', input: 1 }, 'priced_as'],
    ['priced_as with a control character', 'my-model', { priced_as: 'gpt-4o\u0000' }, 'priced_as'],
  ];
  it.each(cases)('%s', async (_name, model, body, field) => {
    const { token } = proxy.account;
    const response = await put(token, model, body);
    expect(response.status).toBe(400);
    const error = expectManagementError(await response.text());
    expect(error).toMatchObject({ code: 'invalid_request', field });
    // The message names what is wrong without echoing the character itself.
    expect([...error.message].some((c) => c.charCodeAt(0) < 0x20 || c === '\u202e')).toBe(false);
  });
});
