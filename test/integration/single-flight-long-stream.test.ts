/**
 * Identical cached requests while the provider streams a long answer to the first one: a waiting
 * request does not wait for the end of that stream, nor start a whole new limit at its own
 * deadline. At half its limit it calls the provider itself with the half that is left, so it
 * answers within one limit of its arrival; when the first request's stream fails, the waiting
 * requests are forwarded once, as one new flight.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { startProxy, type ProxyServer } from '../support/proxy-server';

/** Long enough for requests to join on a loaded machine; each test takes about this long. */
const TIME_LIMIT_MS = 4_000;

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy({ env: { UPSTREAM_TIMEOUT_MS: String(TIME_LIMIT_MS) } });
});
afterAll(async () => {
  await proxy?.stop();
});

const fake = () => proxy.fakes.fakes['prov-b'];

function client(cached: boolean) {
  return new OpenAI({
    baseURL: `${proxy.proxyBase}/prov-b/v1`,
    apiKey: proxy.account.token,
    maxRetries: 0,
    defaultHeaders: cached ? { 'x-proxy-cache': 'true' } : {},
  });
}

const prompt = (label: string) => [{ role: 'user' as const, content: `${label} ${randomBytes(6).toString('hex')}` }];

/** A stream read to its end: its text, or the API error the SDK raised. */
async function streamed(cached: boolean, messages: ReturnType<typeof prompt>) {
  try {
    const stream = await client(cached).chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    return { status: 200, text };
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status ?? 0, text: error.message };
    throw error;
  }
}

/** Starts a stream that the provider keeps going until `stop` is called; resolves once its headers are in. */
async function leaderStreaming(messages: ReturnType<typeof prompt>) {
  let stop!: (how: 'end' | 'reset') => void;
  fake().next({ streamUntil: new Promise<'end' | 'reset'>((resolve) => (stop = resolve)) });
  const stream = await client(true).chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
  const finished = (async () => {
    let text = '';
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      return { complete: true, text };
    } catch {
      return { complete: false, text };
    }
  })();
  return { stop, finished };
}

it('a waiting request answers while the first one is still streaming, with one call of its own', async () => {
  const messages = prompt('long stream');
  const before = fake().requests.length;
  const leader = await leaderStreaming(messages);
  try {
    const follower = await streamed(true, messages);
    // The first request's stream is still going: the waiting one did not wait for its end.
    expect(follower.status).toBe(200);
    expect(follower.text.length).toBeGreaterThan(0);
    expect(fake().requests.length).toBe(before + 2);
  } finally {
    leader.stop('end');
  }
  await expect(leader.finished).resolves.toMatchObject({ complete: true });
});

it('a waiting request whose own call hangs calls at half its limit and answers 504 within it', async () => {
  const messages = prompt('long stream, hanging second call');
  const before = fake().requests.length;
  const leader = await leaderStreaming(messages);
  const events: string[] = [];
  const note =
    (event: string) =>
    <T>(value: T) => (events.push(event), value);
  try {
    // Every call after the first hangs: a plain request's 504 comes one whole limit after it arrived.
    fake().always({ hang: true });
    const early = streamed(false, prompt('clock sent first')).then(note('whole limit of a request sent just before'));
    await fake().waitForRequests(before + 2);
    const follower = streamed(true, messages).then(note('waiting request answers'));
    await fake().waitForRequests(before + 3);
    note('waiting request calls the provider')(undefined);
    const late = streamed(false, prompt('clock sent at its call')).then(
      note('whole limit of a request sent at its call'),
    );
    const outcomes = await Promise.all([early, follower, late]);
    expect(outcomes.map((o) => o.status)).toEqual([504, 504, 504]);
    // Its message names the limit it was held to from its arrival, not the part left for its own call.
    expect(outcomes[1]!.text).toContain(`did not respond within ${TIME_LIMIT_MS / 1000} seconds`);
    // It called at half its limit (before the request sent just before it timed out), and it
    // answered within its own limit: before a whole limit had passed since that call.
    expect(events).toEqual([
      'waiting request calls the provider',
      'whole limit of a request sent just before',
      'waiting request answers',
      'whole limit of a request sent at its call',
    ]);
    expect(fake().requests.length).toBe(before + 4);
  } finally {
    fake().always(undefined);
    leader.stop('end');
  }
  await expect(leader.finished).resolves.toMatchObject({ complete: true });
});

it('when the first request’s stream fails, the waiting requests are forwarded once, as one flight', async () => {
  const messages = prompt('long stream cut');
  const before = fake().requests.length;
  const leader = await leaderStreaming(messages);
  const followers = Array.from({ length: 3 }, () => streamed(true, messages));
  // The second flight's call waits for the test, so the three requests join it whatever the timing.
  let release!: () => void;
  fake().next({ firstEventWhen: new Promise<void>((resolve) => (release = resolve)) });
  leader.stop('reset');
  await expect(leader.finished).resolves.toMatchObject({ complete: false });
  await fake().waitForRequests(before + 2);
  release();
  const outcomes = await Promise.all(followers);
  expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
  expect(fake().requests.length).toBe(before + 2);
});
