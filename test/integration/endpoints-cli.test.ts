/**
 * Coding CLIs through the proxy as their users configure them: Claude Code (Authorization: Bearer
 * with a proxy token, `/v1/messages?beta=true`, count_tokens with and without `v1`) and tools built
 * on the openai SDK, which need only OPENAI_BASE_URL and OPENAI_API_KEY.
 */
import { randomBytes } from 'node:crypto';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const user = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

describe('Claude Code and OpenAI-compatible CLIs', () => {
  it('Claude Code’s calls: Authorization: Bearer with a proxy token, /v1/messages?beta=true and count_tokens (also without v1)', async () => {
    const requester = user('claude-code');
    const headers = {
      authorization: `Bearer ${proxy.account.token}`,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219',
      'content-type': 'application/json',
      'x-proxy-user': requester,
    };
    const fake = proxy.fakes.fakes['prov-a'];
    const before = fake.requests.length;
    const message = await fetch(`${proxy.proxyBase}/v1/messages?beta=true`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
    });
    expect(message.status).toBe(200);
    expect(await message.text()).toContain('event: message_stop');
    const count = await fetch(`${proxy.proxyBase}/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await count.json()).toEqual({ input_tokens: 2095 });
    expect(fake.requests.slice(before).map((r) => r.path)).toEqual([
      '/v1/messages?beta=true',
      '/v1/messages/count_tokens?beta=true',
    ]);
    expect(fake.requests[before]!.headers['x-api-key']).toBe(proxy.storedKeys['prov-a']);
    const rows = await proxy.waitForRows(proxy.account.token, 2, `requester=${requester}`);
    expect(rows.map((r) => r.kind).sort()).toEqual(['count_tokens', 'messages']);
  });

  it('OPENAI_BASE_URL and OPENAI_API_KEY are all an openai-SDK tool needs', async () => {
    const { default: OpenAI } = await import('openai');
    const saved = { base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = `${proxy.proxyBase}/prov-b/v1`;
    process.env.OPENAI_API_KEY = proxy.account.token;
    try {
      const client = new OpenAI({ maxRetries: 0 });
      const response = await client.responses.create({ model: 'gpt-4.1', input: 'hi' });
      expect(response.output_text.length).toBeGreaterThan(0);
      const page = await client.models.list();
      expect(page.data.length).toBe(3);
    } finally {
      if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.base;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
    }
  });
});
