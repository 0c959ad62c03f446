/**
 * The cache feature as the pipeline meets it (`ProxyCache.consult` → hit or fill), over the
 * real DynamoDB adapter on DynamoDB Local: serve or forward, the fill's life from the
 * provider's first byte to its commit, the `x-proxy-cache` status, and single flight only
 * where it is wired.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { cacheKey } from '../../lambda/cache/cache-key';
import type { CacheFill, FillContext } from '../../lambda/cache/cache-fill';
import type { CacheMode } from '../../lambda/cache/cache-mode';
import type { CacheRequest } from '../../lambda/cache/cache-request';
import { ProxyCache, type CacheDecision } from '../../lambda/cache/proxy-cache';
import type { ReplayRequest } from '../../lambda/cache/replay';
import type { CachedResponse } from '../../lambda/cache/response-cache';
import { SingleFlight } from '../../lambda/cache/single-flight';
import { UpstreamTimeoutError } from '../../lambda/base/errors';
import type { Logger } from '../../lambda/base/logger';
import { chatDialect } from '../../lambda/providers/dialects/chat';
import type { DynamoClients } from '../../lambda/store/dynamodb/client';
import { DynamoResponseCache } from '../../lambda/cache/dynamodb/cache-store';
import { eventually } from '../support/patience';
import { createTestTables } from '../support/tables';

const USAGE = { inputTokens: 11, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 };
const ANSWER = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
});
const JSON_REPLAY: ReplayRequest = {
  dialect: chatDialect,
  stream: false,
  hideAddedUsage: false,
  clientAskedForUsage: true,
};

let clients: DynamoClients;
let store: DynamoResponseCache;
const warnings: string[] = [];
const log: Logger = { info: () => undefined, warn: (message) => warnings.push(message), error: () => undefined };

beforeAll(async () => {
  const created = await createTestTables();
  clients = created.clients;
  store = new DynamoResponseCache(clients.doc, created.tables.cache);
});

afterAll(async () => {
  await store.idle();
  clients.raw.destroy();
});

function cacheRequest(mode: CacheMode, ttlSeconds = 3600): CacheRequest {
  const body = {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: `fill ${randomBytes(6).toString('hex')}` }],
  };
  return {
    mode,
    bypass: false,
    key: cacheKey({ accountId: 'acc-fill', provider: 'prov-b', kind: 'chat', body }),
    ttlSeconds,
  };
}

/** A request's context, keeping the background work it hands over so a test can wait for it. */
function context(): FillContext & { work: Promise<unknown>[] } {
  const work: Promise<unknown>[] = [];
  return {
    requestId: `req-${randomBytes(4).toString('hex')}`,
    track: (w) => work.push(w),
    costNanos: () => 4_200,
    work,
  };
}

async function consult(cache: ProxyCache, request: CacheRequest, ctx = context()): Promise<CacheDecision> {
  return cache.consult(request, cache.lookup(request, Date.now()), JSON_REPLAY, ctx);
}

function fillOf(decision: CacheDecision): CacheFill {
  if (!('fill' in decision)) throw new Error('expected the request to be forwarded, got a hit');
  return decision.fill;
}

async function text(body: Readable): Promise<string> {
  let out = '';
  for await (const chunk of body) out += String(chunk);
  return out;
}

/** What the forward step does with a complete 2xx JSON answer. */
async function answerWith(fill: CacheFill, body = ANSWER): Promise<void> {
  expect(fill.begin({ status: 200, contentType: 'application/json', format: 'json' })).toBe(fill);
  fill.append(body.slice(0, 40));
  fill.append(body.slice(40));
  await fill.finish({ complete: true, model: 'gpt-4o-mini', usage: USAGE });
}

describe('serve or forward', () => {
  const cache = () => new ProxyCache({ store, log, now: Date.now });

  it('forwards a first request with MISS and serves the next one from the stored answer with HIT', async () => {
    const request = cacheRequest('read-write');
    const fill = fillOf(await consult(cache(), request));
    expect(fill.statusHeader).toEqual({ 'x-proxy-cache': 'MISS' });
    await answerWith(fill);

    const decision = await consult(cache(), request);
    if (!('hit' in decision)) throw new Error('expected a hit');
    expect(decision.hit.statusCode).toBe(200);
    expect(decision.hit.headers).toEqual({ 'content-type': 'application/json', 'x-proxy-cache': 'HIT' });
    expect(decision.hit.entry).toMatchObject({ model: 'gpt-4o-mini', usage: USAGE, costNanos: 4_200 });
    expect(await text(decision.hit.body)).toBe(ANSWER);
  });

  it('refresh never reads: it forwards with REFRESH and replaces the entry', async () => {
    const request = cacheRequest('read-write');
    await answerWith(fillOf(await consult(cache(), request)));

    const refresh = { ...request, mode: 'refresh' as const };
    expect(cache().lookup(refresh, Date.now())).toBeUndefined();
    const fill = fillOf(await consult(cache(), refresh));
    expect(fill.statusHeader).toEqual({ 'x-proxy-cache': 'REFRESH' });
    const newer = ANSWER.replace('Hello there', 'Fresh answer');
    await answerWith(fill, newer);

    const decision = await consult(cache(), request);
    expect('hit' in decision && (await text(decision.hit.body))).toBe(newer);
  });

  it('off: no lookup, no status header, and nothing stored', async () => {
    const request = cacheRequest('off');
    expect(cache().lookup(request, Date.now())).toBeUndefined();
    const fill = fillOf(await consult(cache(), request));
    expect(fill.statusHeader).toEqual({});
    expect(fill.begin({ status: 200, contentType: 'application/json', format: 'json' })).toBeUndefined();
    expect(await store.get(request.key!, Date.now())).toBeUndefined();
  });
});

describe('the fill stores only a complete 2xx answer it can read', () => {
  let cache: ProxyCache;
  beforeAll(() => {
    cache = new ProxyCache({ store, log, now: Date.now });
  });

  it.each([
    ['an error status', { status: 429, contentType: 'application/json', format: 'json' as const }],
    [
      'an unreadable body (a download)',
      { status: 200, contentType: 'application/octet-stream', format: 'opaque' as const },
    ],
  ])('not %s', async (_label, answer) => {
    const request = cacheRequest('read-write');
    const fill = fillOf(await consult(cache, request));
    expect(fill.begin(answer)).toBeUndefined();
    fill.append(ANSWER);
    await fill.finish({ complete: true });
    fill.abandon();
    expect(await store.get(request.key!, Date.now())).toBeUndefined();
  });

  it('not a body that ended incomplete (cut off, unparsable)', async () => {
    const request = cacheRequest('read-write');
    const fill = fillOf(await consult(cache, request));
    expect(fill.begin({ status: 200, contentType: 'text/event-stream', format: 'sse' })).toBe(fill);
    fill.append('data: {"choices":[]}\n\n');
    await fill.finish({ complete: false });
    await store.idle();
    expect(await store.get(request.key!, Date.now())).toBeUndefined();
  });

  it('not after abandon (upstream cut, client gone before the end)', async () => {
    const request = cacheRequest('read-write');
    const fill = fillOf(await consult(cache, request));
    fill.begin({ status: 200, contentType: 'application/json', format: 'json' });
    fill.append(ANSWER);
    fill.abandon();
    await fill.finish({ complete: true, usage: USAGE });
    await store.idle();
    expect(await store.get(request.key!, Date.now())).toBeUndefined();
  });

  it('abandon once the commit has started changes nothing: a client leaving after the last byte keeps the entry, and waiting requests get it', async () => {
    const withFlights = new ProxyCache({
      store,
      log,
      now: Date.now,
      flights: new SingleFlight<CachedResponse>(30_000),
    });
    const request = cacheRequest('read-write');
    const ctx = context();
    const fill = fillOf(await consult(withFlights, request, ctx));
    const follower = consult(withFlights, request);
    fill.begin({ status: 200, contentType: 'application/json', format: 'json' });
    fill.append(ANSWER);
    const finished = fill.finish({ complete: true, model: 'gpt-4o-mini', usage: USAGE });
    fill.abandon();
    await finished;
    await Promise.all(ctx.work);
    expect((await store.get(request.key!, Date.now()))?.body).toBe(ANSWER);
    const decision = await follower;
    expect('hit' in decision && decision.hit.headers['x-proxy-cache']).toBe('HIT');
  });

  it('max-age=0 answers normally and stores nothing', async () => {
    const request = cacheRequest('read-write', 0);
    const fill = fillOf(await consult(cache, request));
    await answerWith(fill);
    expect(await store.get(request.key!, Date.now())).toBeUndefined();
    expect(warnings).toEqual([]);
  });
});

describe('single flight', () => {
  /** Whether a promise is still pending after the current turn of the event loop. */
  async function pending(promise: Promise<unknown>): Promise<boolean> {
    const marker = Symbol('pending');
    return (await Promise.race([promise, new Promise((resolve) => setImmediate(() => resolve(marker)))])) === marker;
  }

  it('without flights (a Lambda instance), identical misses never wait for each other', async () => {
    const cache = new ProxyCache({ store, log, now: Date.now });
    const request = cacheRequest('read-write');
    const first = fillOf(await consult(cache, request));
    expect(first.begin({ status: 200, contentType: 'application/json', format: 'json' })).toBe(first);
    first.append(ANSWER);
    // The first is still streaming; with a flight the second would wait for it (up to the upstream timeout).
    let waiting: NodeJS.Timeout | undefined;
    const second = await Promise.race([
      consult(cache, request),
      new Promise((resolve) => (waiting = setTimeout(resolve, 10_000, 'waited'))),
    ]);
    // Left running, the timer would keep this worker alive after its last file.
    clearTimeout(waiting);
    expect(second).not.toBe('waited');
    expect(fillOf(second as CacheDecision).statusHeader).toEqual({ 'x-proxy-cache': 'MISS' });
    first.abandon();
  });

  it('with flights (the local server), an identical request waits for the leader and is served its answer as a hit', async () => {
    const cache = new ProxyCache({ store, log, now: Date.now, flights: new SingleFlight<CachedResponse>(30_000) });
    const request = cacheRequest('read-write');
    const leader = fillOf(await consult(cache, request));
    const follower = consult(cache, request);
    expect(await pending(follower)).toBe(true);

    await answerWith(leader);
    const decision = await follower;
    if (!('hit' in decision)) throw new Error('expected the follower to be served the leader’s answer');
    expect(decision.hit.headers['x-proxy-cache']).toBe('HIT');
    expect(await text(decision.hit.body)).toBe(ANSWER);
  });

  it('a follower whose leader is cut off goes to the provider itself', async () => {
    const cache = new ProxyCache({ store, log, now: Date.now, flights: new SingleFlight<CachedResponse>(30_000) });
    const request = cacheRequest('read-write');
    const leader = fillOf(await consult(cache, request));
    const follower = consult(cache, request);
    leader.begin({ status: 200, contentType: 'text/event-stream', format: 'sse' });
    leader.append('data: {"choices":[]}\n\n');
    leader.abandon();
    const fill = fillOf(await follower);
    expect(fill.statusHeader).toEqual({ 'x-proxy-cache': 'MISS' });
  });

  it('when the leader’s answer is not one to share, one follower calls the provider and the others are served its answer', async () => {
    const flights = new SingleFlight<CachedResponse>(30_000);
    const cache = new ProxyCache({ store, log, now: Date.now, flights });
    const request = cacheRequest('read-write');
    const leader = fillOf(await consult(cache, request));
    const followers = [consult(cache, request), consult(cache, request), consult(cache, request)];
    await eventually(async () => (flights.waiting === 3 ? true : undefined));
    // A provider error is never stored: the followers go on at once, not after its body.
    expect(leader.begin({ status: 500, contentType: 'application/json', format: 'json' })).toBeUndefined();
    const next = await Promise.race(followers);
    const second = fillOf(next);
    // Held to what is left of its own limit, which started when it arrived.
    expect(second.timeLimitMs).toBeLessThanOrEqual(30_000);
    await answerWith(second);
    const decisions = await Promise.all(followers);
    expect(decisions.filter((d) => 'fill' in d)).toHaveLength(1);
    expect(decisions.filter((d) => 'hit' in d)).toHaveLength(2);
  });

  it('a provider timeout of the leader is the followers’ answer too', async () => {
    const flights = new SingleFlight<CachedResponse>(30_000);
    const cache = new ProxyCache({ store, log, now: Date.now, flights });
    const request = cacheRequest('read-write');
    const leader = fillOf(await consult(cache, request));
    const followers = [consult(cache, request), consult(cache, request)];
    await eventually(async () => (flights.waiting === 2 ? true : undefined));
    const timeout = new UpstreamTimeoutError(30_000);
    leader.abandon(timeout);
    await expect(Promise.all(followers)).resolves.toEqual([{ failed: timeout }, { failed: timeout }]);
  });
});
