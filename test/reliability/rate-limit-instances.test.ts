/**
 * The rate limit is one budget per proxy token per minute, shared by every
 * instance through the store: two instances on the same tables admit exactly
 * the limit of the requests they are sent at once (50 more than it). The instances
 * run in this process, each with its own clients, so their clocks can be held
 * still: every request of a test falls in one minute, wherever the wall clock is.
 * The limit is set to 20 (the default is 100, test/integration/rate-limit-window.test.ts):
 * what is proven is the limit crossed under concurrent requests on both instances,
 * not how many requests it takes, so far fewer calls prove the same. The 50 refused at once
 * stay: refusals racing to close the same bucket is a path of the gate (token-gate.ts, `close`).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { TEST_MODELS } from '../support/sdk-clients';
import { runPool } from './support/pool';
import { callProxy, expectChatError, expectMessagesError, upstreamCalls, type CallResult } from './support/requests';
import { allRows } from './support/rows';

jest.setTimeout(360_000);

const LIMIT = 20;
const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT) };
let first: InProcessProxy;
let second: InProcessProxy;

beforeAll(async () => {
  const at = Date.now();
  first = await startInProcessProxy({ env, now: () => at });
  second = await startInProcessProxy({ env, now: () => at, sameStoreAs: first });
});

afterAll(async () => {
  await second?.close();
  await first?.close();
});

function expectRateLimited(result: CallResult, style: 'messages' | 'chat'): void {
  expect(result.status).toBe(429);
  expect(result.headers.get('retry-after')).toBe('60');
  expect(result.headers.get('x-proxy-ratelimit-remaining')).toBe('0');
  if (style === 'messages') expect(expectMessagesError(result.text).type).toBe('rate_limit_error');
  else expect(expectChatError(result.text)).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
}

test('50 requests past the limit for one token, at once across two instances: exactly the limit admitted, 50 refused with Retry-After: 60', async () => {
  // The account is made on the first instance only; the second knows it through the shared tables.
  const account = { token: await first.createAccount('shared-budget') };
  const ownKey = 'client-own-key-for-rate-limit-0001';
  // One set of secrets for both instances: neither may log any.
  first.secrets.add(ownKey);
  const before = upstreamCalls(first);

  const results = await runPool(LIMIT + 50, LIMIT + 50, (index) =>
    callProxy(index % 2 ? second : first, {
      // Both API styles draw on the one budget; pass-through, as a team sharing one proxy token with their own keys.
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

test('the request past the limit on one instance makes both official SDKs raise RateLimitError', async () => {
  const account = { token: await first.createAccount('single-instance') };
  const results = await runPool(LIMIT, LIMIT, (index) =>
    callProxy(first, { provider: index % 2 ? 'prov-a' : 'prov-b', token: account.token, prompt: `n${index}` }),
  );
  expect(results.map((r) => r.status)).toEqual(Array(LIMIT).fill(200));
  expect(results.at(-1)!.headers.get('x-proxy-ratelimit-limit')).toBe(String(LIMIT));

  const anthropic = new Anthropic({ baseURL: first.proxyBase, apiKey: account.token, maxRetries: 0 });
  const anthropicError = await anthropic.messages
    .create({ model: TEST_MODELS['prov-a'], max_tokens: 16, messages: [{ role: 'user', content: 'one too many' }] })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(anthropicError).toBeInstanceOf(Anthropic.RateLimitError);
  expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).status).toBe(429);
  expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toBe('60');

  const openai = new OpenAI({ baseURL: `${first.proxyBase}/prov-b/v1`, apiKey: account.token, maxRetries: 0 });
  const openaiError = await openai.chat.completions
    .create({ model: TEST_MODELS['prov-b'], messages: [{ role: 'user', content: 'one too many' }] })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(openaiError).toBeInstanceOf(OpenAI.RateLimitError);
  expect((openaiError as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('60');
  expect((openaiError as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
});

describe('a wrong secret for a real token id', () => {
  /** Interleaved forged and real requests past the limit: each instance gets both kinds, in every order (round % 2, round % 3). */
  const ROUNDS = 24;
  /** The token's id (public: it is in rows and the dashboard) with a secret that is not its own. */
  const forge = (token: string) => `${token.slice(0, -8)}${token.slice(-8) === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA'}`;

  test('past the limit, forged requests interleaved with real ones across two instances admit no extra real request', async () => {
    const account = { token: await first.createAccount('forged-refunds') };
    const ownKey = 'client-own-key-for-forged-refunds-01';
    const forged = forge(account.token);
    for (const secret of [ownKey, forged]) first.secrets.add(secret);
    const call = (server: InProcessProxy, token: string, prompt: string) =>
      callProxy(server, { provider: 'prov-b', token, providerKey: ownKey, prompt });

    const filling = await runPool(LIMIT, LIMIT, (index) =>
      call(index % 2 ? second : first, account.token, `fill ${index}`),
    );
    expect(filling.filter((result) => result.status === 200)).toHaveLength(LIMIT);

    const before = upstreamCalls(first);
    const real: CallResult[] = [];
    const fakes: CallResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each wrong-secret request lands on one instance, the real one right after on either.
      fakes.push(await call(round % 2 ? first : second, forged, `forged ${round}`));
      real.push(await call(round % 3 ? second : first, account.token, `after forged ${round}`));
    }
    expect(fakes.map((result) => result.status)).toEqual(Array(ROUNDS).fill(401));
    expect(real.filter((result) => result.status === 200)).toHaveLength(0);
    for (const result of real) expectRateLimited(result, 'chat');
    expect(upstreamCalls(first) - before).toBe(0);
  });

  test("under the limit, forged requests do not use up the real token's budget", async () => {
    const account = { token: await first.createAccount('forged-under-limit') };
    const ownKey = 'client-own-key-for-forged-refunds-02';
    const forged = forge(account.token);
    for (const secret of [ownKey, forged]) first.secrets.add(secret);
    const call = (server: InProcessProxy, token: string, prompt: string) =>
      callProxy(server, { provider: 'prov-b', token, providerKey: ownKey, prompt });

    const refused = await runPool(LIMIT, 10, (index) => call(index % 2 ? second : first, forged, `forged ${index}`));
    expect(refused.map((result) => result.status)).toEqual(Array(LIMIT).fill(401));
    // Nothing of a refused request happens after its answer: the gate's one conditional write counts only a
    // request whose secret matches, so these (as many as the limit) never touched the count.
    const results = await runPool(LIMIT + 10, 20, (index) =>
      call(index % 2 ? second : first, account.token, `real ${index}`),
    );
    expect(results.filter((result) => result.status === 200)).toHaveLength(LIMIT);
    expect(results.filter((result) => result.status === 429)).toHaveLength(10);
  });
});
