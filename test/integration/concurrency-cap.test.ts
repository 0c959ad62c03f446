/**
 * In AWS, past the function's reserved concurrency, Lambda refuses a request to the function URL
 * itself, before the proxy runs: a `429` whose body is Lambda's (`TooManyRequestsException`), not the
 * endpoint's error shape, with no `Retry-After` (docs/errors-and-limits.md, docs/failure-modes.md).
 * What those pages promise a user is what their SDK does with it: raise its rate-limit error after
 * retrying with backoff. A loopback server stands in for the throttled function URL, since the
 * answer comes from Lambda, not from any code of this repository.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';

let server: Server;
let base: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(429, {
        'content-type': 'application/json',
        'x-amzn-errortype': 'TooManyRequestsException',
      });
      res.end(JSON.stringify({ Message: 'Rate Exceeded.' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/proxy`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const RETRIES = 2;

test('the OpenAI SDK raises RateLimitError after retrying Lambda’s 429', async () => {
  const before = requests;
  const client = new OpenAI({ baseURL: `${base}/prov-b/v1`, apiKey: 'sk-proxy-x', maxRetries: RETRIES });
  const error = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    .then(
      () => undefined,
      (failure: unknown) => failure,
    );
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  expect(requests - before).toBe(RETRIES + 1);
});

test('the Anthropic SDK raises RateLimitError after retrying Lambda’s 429', async () => {
  const before = requests;
  const client = new Anthropic({ baseURL: base, apiKey: 'sk-proxy-x', maxRetries: RETRIES });
  const error = await client.messages
    .create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
    .then(
      () => undefined,
      (failure: unknown) => failure,
    );
  expect(error).toBeInstanceOf(Anthropic.RateLimitError);
  expect(requests - before).toBe(RETRIES + 1);
});
