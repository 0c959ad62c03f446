/**
 * The rate limit is one budget per proxy token per minute, shared by every
 * instance through the store: two server processes on the same tables admit
 * exactly 100 of 150 requests between them.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';
import { awayFromMinuteEdge, runPool } from './support/pool';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls, type CallResult } from './support/requests';
import { allRows } from './support/rows';

jest.setTimeout(180_000);

const LIMIT = 100;
let fakes: AllFakes;
let first: ProxyServer;
let second: ProxyServer;

beforeAll(async () => {
  fakes = await startAllFakes();
  const tablePrefix = `rl${Date.now().toString(36)}-`;
  [first, second] = [await startProxy({ fakes, tablePrefix }), await startProxy({ fakes, tablePrefix })];
});

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await fakes?.close();
});

function expectRateLimited(result: CallResult, style: 'messages' | 'chat'): void {
  expect(result.status).toBe(429);
  expect(result.headers.get('retry-after')).toBe('60');
  expect(result.headers.get('x-ratelimit-remaining')).toBe('0');
  if (style === 'messages') expect(expectMessagesError(result.text).type).toBe('rate_limit_error');
  else expect(expectChatError(result.text)).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
}

test('150 requests for one token split across two instances: exactly 100 admitted, 50 refused with Retry-After: 60', async () => {
  // The account is made on the first instance only; the second knows it through the shared tables.
  const account = await first.createAccount('shared-budget');
  const ownKey = 'client-own-key-for-rate-limit-0001';
  first.secrets.add(ownKey);
  second.secrets.add(account.token);
  second.secrets.add(ownKey);
  const before = upstreamCalls(first);

  await awayFromMinuteEdge(25_000);
  const results = await runPool(150, 50, (index) =>
    callProxy(index % 2 ? second : first, {
      // Both API styles draw on the one budget; pass-through, so neither instance needs the other's local key file.
      provider: index % 3 === 0 ? 'prov-a' : 'prov-b',
      token: account.token,
      providerKey: ownKey,
      prompt: `budget ${index}`,
    }),
  );

  const indexed = results.map((result, index) => ({ result, index }));
  const admitted = indexed.filter(({ result }) => result.status === 200);
  const refused = indexed.filter(({ result }) => result.status !== 200);
  expect(admitted.length).toBe(LIMIT);
  expect(refused.length).toBe(50);
  for (const { result, index } of refused) expectRateLimited(result, index % 3 === 0 ? 'messages' : 'chat');
  // Both instances answered some of each kind: the count really was shared.
  expect(new Set(admitted.map(({ index }) => index % 2)).size).toBe(2);
  expect(new Set(refused.map(({ index }) => index % 2)).size).toBe(2);

  // Refused requests never reached a provider and left no row; admitted ones left one each.
  expect(upstreamCalls(first) - before).toBe(LIMIT);
  const rows = await allRows(first, account.token);
  expect(rows.length).toBe(LIMIT);
  expect(rows.every((row) => row.status_code === 200)).toBe(true);
});

test('the 101st request on one instance makes both official SDKs raise RateLimitError', async () => {
  const account = await first.createAccount('single-instance');
  await first.saveKey(account.token, 'prov-a');
  await first.saveKey(account.token, 'prov-b');
  await awayFromMinuteEdge(25_000);
  const results = await runPool(LIMIT, 25, (index) => callProxy(first, { provider: index % 2 ? 'prov-a' : 'prov-b', token: account.token, prompt: `n${index}` }));
  expect(results.map((r) => r.status)).toEqual(Array(LIMIT).fill(200));
  expect(results.at(-1)!.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));

  const anthropic = new Anthropic({ baseURL: first.proxyBase, apiKey: account.token, maxRetries: 0 });
  const anthropicError = await anthropic.messages
    .create({ model: TEST_MODELS['prov-a'], max_tokens: 16, messages: [{ role: 'user', content: 'one too many' }] })
    .then(() => undefined, (error: unknown) => error);
  expect(anthropicError).toBeInstanceOf(Anthropic.RateLimitError);
  expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).status).toBe(429);
  expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toBe('60');

  const openai = new OpenAI({ baseURL: `${first.proxyBase}/prov-b/v1`, apiKey: account.token, maxRetries: 0 });
  const openaiError = await openai.chat.completions
    .create({ model: TEST_MODELS['prov-b'], messages: [{ role: 'user', content: 'one too many' }] })
    .then(() => undefined, (error: unknown) => error);
  expect(openaiError).toBeInstanceOf(OpenAI.RateLimitError);
  expect((openaiError as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('60');
  expect((openaiError as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
});
