/**
 * A 413 on the local server must not leave a dead kept-alive connection behind: the rest of the
 * body is read and discarded, the answer says `Connection: close`, and the client's next request
 * (on its pool) is answered at once — not after the SDK's 10-minute timeout.
 */
import { Agent, request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => proxy?.stop());

const OVERSIZED = 'x'.repeat(7 * 1024 * 1024);

test('the OpenAI SDK gets a 413, then its next request on the same client is answered', async () => {
  const client = new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    timeout: 20_000,
  });
  const model = TEST_MODELS['prov-b'];
  await expect(
    client.chat.completions.create({ model, messages: [{ role: 'user', content: OVERSIZED }] }),
  ).rejects.toMatchObject({ status: 413 });
  const answer = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'after the 413' }],
  });
  expect(answer.choices[0]?.message).toBeDefined();
});

test('the 413 says Connection: close, and a keep-alive agent with one socket carries the next request', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const send = (body: string) =>
      new Promise<{ status?: number; connection?: string; text: string }>((resolve, reject) => {
        const request = httpRequest(
          `${proxy.proxyBase}/prov-b/v1/chat/completions`,
          {
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
            timeout: 20_000,
          },
          (response) => {
            let text = '';
            response.on('data', (chunk) => (text += String(chunk)));
            response.on('end', () =>
              resolve({ status: response.statusCode, connection: response.headers.connection, text }),
            );
          },
        );
        request.on('timeout', () => request.destroy(new Error('no answer within 20 s')));
        request.on('error', reject);
        request.end(body);
      });
    const tooBig = await send(
      JSON.stringify({ model: TEST_MODELS['prov-b'], messages: [{ role: 'user', content: OVERSIZED }] }),
    );
    expect(tooBig.status).toBe(413);
    expect(tooBig.connection).toBe('close');
    expect(JSON.parse(tooBig.text).error.code).toBe('request_too_large');
    const next = await send(
      JSON.stringify({ model: TEST_MODELS['prov-b'], messages: [{ role: 'user', content: 'next' }] }),
    );
    expect(next.status).toBe(200);
  } finally {
    agent.destroy();
  }
});
