/**
 * The hot path's store calls, counted between the local server and DynamoDB Local: once warm, a
 * request with a stored key or a pass-through request makes one store call before it is forwarded
 * (the token gate) and one after the provider has answered (its usage row), JSON or stream alike.
 * A request naming its requester adds one read (that requester's budget) before forwarding.
 * Tags (docs/tags.md) add no round trip: however many a request and its token carry, their budgets
 * are read in that same one batched call beside the gate, sent with it. A token's changed limit
 * costs the first request after the change one more gate call, that once.
 */
import { AHEAD_BUCKETS } from '../../lambda/auth/sliding-minute';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { EVENTUALLY_MS } from '../support/patience';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { inOneWave, startStoreCallCounter, type StoreCall, type StoreCallCounter } from '../support/store-call-counter';

let fakes: AllFakes;
let counter: StoreCallCounter;
let proxy: ProxyServer;

beforeAll(async () => {
  fakes = await startAllFakes();
  // Each call is marked with the number of requests the provider had received when the call arrived.
  counter = await startStoreCallCounter(process.env.DYNAMODB_ENDPOINT!, () => fakes.fakes['prov-b'].requests.length);
  // The local stream consumer is off: in AWS the rollups are folded by another function, not by the one serving requests.
  proxy = await startProxy({ fakes, env: { DYNAMODB_ENDPOINT: counter.endpoint, STATS_CONSUMER: 'off' } });
});
afterAll(async () => {
  await proxy?.stop();
  await counter?.close();
  await fakes?.close();
});

type Mode = 'stored' | 'pass-through';

/** What a request adds to the plain one: a requester, tags, another proxy token. */
interface Extra {
  requester?: string;
  tags?: string;
  token?: string;
}

function headersFor(mode: Mode, { requester, tags, token = proxy.account.token }: Extra = {}): Record<string, string> {
  const auth: Record<string, string> =
    mode === 'stored'
      ? { authorization: `Bearer ${token}` }
      : { authorization: 'Bearer sk-callers-own-key-0123456789', 'x-proxy-token': token };
  return {
    'content-type': 'application/json',
    ...auth,
    ...(requester ? { 'x-proxy-user': requester } : {}),
    ...(tags ? { 'x-proxy-tags': tags } : {}),
  };
}

/** How long answers are held back at most: only a request whose calls are not sent together waits this long. */
const HOLD_LIMIT_MS = 10_000;

const isRowWrite = (call: StoreCall) => call.tables.some((table) => table.endsWith('usage-logs'));

/** Sends one request and returns the store calls it made: those that arrived before the provider had it, and those after. */
async function callsOf(
  mode: Mode,
  stream: boolean,
  prompt: string,
  extra: Extra = {},
  sentTogether?: number,
): Promise<{ before: StoreCall[]; after: StoreCall[] }> {
  const from = counter.calls.length;
  // Calls the server sends together arrive together, however busy the machine is (see holdAnswers).
  if (sentTogether) counter.holdAnswers(sentTogether, HOLD_LIMIT_MS);
  const seen = fakes.fakes['prov-b'].requests.length;
  const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
    method: 'POST',
    headers: headersFor(mode, extra),
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      ...(stream ? { stream: true } : {}),
    }),
  });
  await response.text();
  expect(response.status).toBe(200);
  await counter.waitFor(from, isRowWrite, EVENTUALLY_MS);
  const calls = counter.calls.slice(from);
  return { before: calls.filter((call) => call.mark === seen), after: calls.filter((call) => call.mark > seen) };
}

describe.each<[Mode, boolean]>([
  ['stored', false],
  ['stored', true],
  ['pass-through', false],
  ['pass-through', true],
])('%s key, stream %s', (mode, stream) => {
  test('one store call before forwarding and one after the answer: the usage row', async () => {
    // The first requests of an instance also read and cache what later ones reuse (the stored key).
    for (let i = 0; i < 2; i++) await callsOf(mode, stream, `warm ${i}`);
    for (let i = 0; i < 3; i++) {
      const { before, after } = await callsOf(mode, stream, `counted ${i}`);
      expect(before).toHaveLength(1);
      expect(isRowWrite(before[0]!)).toBe(false);
      expect(after).toHaveLength(1);
      expect(isRowWrite(after[0]!)).toBe(true);
    }
  });
});

test('the gate call is small (docs/decisions.md): no attribute names, six conditions, one ring slot checked, well under 1 KB', async () => {
  for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm gate ${i}`);
  const gateCalls: StoreCall[] = [];
  for (let i = 0; i < 6; i++) gateCalls.push((await callsOf('stored', false, `gate size ${i}`)).before[0]!);
  const bodies = gateCalls.map((call) => call.body as Record<string, string | undefined>);
  const bytes = bodies.map((body) => Buffer.byteLength(JSON.stringify(body)));
  console.log(`gate UpdateItem bytes: ${bytes.join(', ')}; condition: ${bodies[0]!.ConditionExpression}`);
  for (const [i, body] of bodies.entries()) {
    expect(gateCalls[i]!.operation).toBe('UpdateItem');
    expect(body.ExpressionAttributeNames).toBeUndefined();
    // The token's copy (3), its share (1), where the item's newest bucket is (1), room since the oldest bucket (1).
    const conditions = body.ConditionExpression!.replace(/BETWEEN (\S+) AND/g, 'BETWEEN $1 TO').split(' AND ');
    expect(conditions).toHaveLength(6);
    // One slot read; a write starts at most the buckets since the newest it knew of and empties as many ahead.
    expect(body.ConditionExpression!.match(/\br\d+\b/g)).toHaveLength(1);
    expect(new Set(body.UpdateExpression!.match(/\br\d+\b/g)).size).toBeLessThanOrEqual(2 * AHEAD_BUCKETS);
    expect(bytes[i]).toBeLessThan(1024);
  }
});

test("a request naming its requester reads that requester's budget before forwarding: two calls before, one after", async () => {
  for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm requester ${i}`, { requester: 'alice@example.com' });
  const { before, after } = await callsOf('stored', false, 'counted requester', { requester: 'alice@example.com' });
  expect(before).toHaveLength(2);
  expect(before.some(isRowWrite)).toBe(false);
  expect(after).toHaveLength(1);
  expect(isRowWrite(after[0]!)).toBe(true);
});

test('a request with no credential or two of them is refused before any store call: its token counts nothing', async () => {
  for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm refusals ${i}`);
  const from = counter.calls.length;
  const refused: Array<Record<string, string>> = [
    { 'x-proxy-token': proxy.account.token },
    { authorization: `Bearer ${proxy.account.token}, Bearer ${proxy.account.token}` },
    { authorization: 'Bearer sk-callers-own-key-0123456789, Bearer another-key', 'x-proxy-token': proxy.account.token },
  ];
  for (const credentials of refused) {
    const response = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentials },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'refused' }] }),
    });
    expect(response.status).toBe(401);
    await response.text();
  }
  // The next request's own two calls (gate, row) are all the store has seen since.
  const { before, after } = await callsOf('stored', false, 'after the refusals');
  expect(counter.calls.slice(from)).toEqual([...before, ...after]);
  expect(before).toHaveLength(1);
});

test("a token's limit changed: the instance's first request after it makes a second gate call, that once (docs/tags.md); the next, one", async () => {
  const answer = async (method: string, path: string, body?: unknown) => {
    const response = await proxy.api(path, { method, token: proxy.account.token, body });
    expect(response.status).toBeLessThan(300);
    return (await response.json()) as Record<string, unknown>;
  };
  const created = await answer('POST', '/api/tokens', { name: 'limit changed' });
  const token = created.token as string;
  proxy.secrets.add(token);
  await answer('PUT', `/api/tokens/${created.token_id as string}/limits`, { requests_per_minute: 1000 });
  for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm limit ${i}`, { token });
  const isGate = (call: StoreCall) => call.tables.some((table) => table.endsWith('rate-limits'));
  const steady = await callsOf('stored', false, 'before the change', { token });
  expect(steady.before.map(isGate)).toEqual([true]);

  await answer('PUT', `/api/tokens/${created.token_id as string}/limits`, { requests_per_minute: 2000 });
  const changed = await callsOf('stored', false, 'first after the change', { token });
  expect(changed.before.map(isGate)).toEqual([true, true]);
  expect(changed.after).toHaveLength(1);
  const next = await callsOf('stored', false, 'next after the change', { token });
  expect(next.before.map(isGate)).toEqual([true]);
});

test("default fallbacks cost no store call: the account's are kept by the instance, the token's come with its gate (docs/fallbacks.md)", async () => {
  const manage = async (method: string, path: string, body?: unknown) => {
    const response = await proxy.api(path, { method, token: proxy.account.token, body });
    expect(response.status).toBeLessThan(300);
    return (await response.json()) as Record<string, unknown>;
  };
  await manage('PUT', '/api/fallbacks/prov-b/gpt-4o-mini', { fallbacks: ['gpt-4.1-mini'] });
  await manage('PUT', '/api/fallback-limits', { first_token_timeout: 20 });
  const created = await manage('POST', '/api/tokens', { name: 'with defaults' });
  const token = created.token as string;
  proxy.secrets.add(token);
  const fallbacks = [{ provider: 'prov-b', model: 'gpt-4o-mini', fallbacks: ['gpt-4.1'] }];
  await manage('PUT', `/api/tokens/${created.token_id as string}/fallbacks`, { fallbacks });
  for (let i = 0; i < 2; i++) await callsOf('stored', true, `warm defaults ${i}`, { token });
  for (let i = 0; i < 2; i++) {
    const { before, after } = await callsOf('stored', true, `counted defaults ${i}`, { token });
    expect(before).toHaveLength(1);
    expect(after).toHaveLength(1);
  }
  const removed = await proxy.api('/api/fallbacks/prov-b/gpt-4o-mini', {
    method: 'DELETE',
    token: proxy.account.token,
  });
  expect(removed.status).toBe(204);
});

describe('tagged requests', () => {
  async function manage(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await proxy.api(path, { method, token: proxy.account.token, body });
    expect(response.status).toBeLessThan(300);
    return (await response.json()) as Record<string, unknown>;
  }

  test.each<[string, string]>([
    ['two tags', 'team=search, feature=autocomplete'],
    ['ten tags', Array.from({ length: 10 }, (_, i) => `key${i}=value${i}`).join(', ')],
  ])(
    "a request with %s reads their budgets in one call sent with the gate's: two calls before forwarding, whatever the number, one after",
    async (_name, tags) => {
      for (let i = 0; i < 2; i++) await callsOf('stored', false, `warm tags ${i}`, { tags });
      for (let i = 0; i < 2; i++) {
        const { before, after } = await callsOf('stored', false, `counted tags ${i}`, { tags }, 2);
        expect(before).toHaveLength(2);
        expect({ oneWave: inOneWave(before), before }).toMatchObject({ oneWave: true });
        expect(before.some(isRowWrite)).toBe(false);
        expect(after).toHaveLength(1);
        expect(isRowWrite(after[0]!)).toBe(true);
      }
    },
  );

  test.each<[Mode, boolean]>([
    ['stored', false],
    ['stored', true],
    ['pass-through', false],
  ])(
    'a token with tags, a rate limit, a model list, a budget and tag budgets, asked with a requester and tags (%s key, stream %s): one round trip before forwarding, no more calls than a request naming its requester',
    async (mode, stream) => {
      const created = await manage('POST', '/api/tokens', { name: `tagged ${mode} ${stream}` });
      const tokenId = created.token_id as string;
      const token = created.token as string;
      proxy.secrets.add(token);
      const own = `team=search-${mode}-${stream}`;
      await manage('PUT', `/api/tokens/${tokenId}`, { tags: { team: own.slice('team='.length), env: 'prod' } });
      await manage('PUT', `/api/tokens/${tokenId}/limits`, { requests_per_minute: 1000, models: ['gpt-4o-mini'] });
      await manage('PUT', `/api/tokens/${tokenId}/budget`, { limit_usd: 1000, period: 'month' });
      await manage('PUT', `/api/budgets/tags/team/${encodeURIComponent(own.slice('team='.length))}`, {
        limit_usd: 1000,
        period: 'month',
      });
      await manage('PUT', '/api/budgets/tags/feature/autocomplete', { limit_usd: 1000, period: 'day' });
      const extra = { token, requester: 'alice@example.com', tags: 'feature=autocomplete, region=eu' };

      // The first requests of an instance learn the token's budget and tags from its gate.
      for (let i = 0; i < 2; i++) await callsOf(mode, stream, `warm tagged token ${i}`, extra);
      for (let i = 0; i < 3; i++) {
        const { before, after } = await callsOf(mode, stream, `counted tagged token ${i}`, extra, 2);
        expect(before).toHaveLength(2);
        expect({ oneWave: inOneWave(before), before }).toMatchObject({ oneWave: true });
        expect(before.some(isRowWrite)).toBe(false);
        // The row alone, one put: its spend is folded later by the stream consumer.
        expect(after).toHaveLength(1);
        expect(isRowWrite(after[0]!)).toBe(true);
      }
      // An app token cannot read the logs: the account's own token reads them, by token (the rows are written: each call above waited for its own).
      const logs = (await manage('GET', `/api/logs?token_id=${tokenId}&limit=1`, undefined)) as {
        items: Array<{ tags?: unknown }>;
      };
      expect(logs.items[0]!.tags).toEqual({
        team: own.slice('team='.length),
        env: 'prod',
        feature: 'autocomplete',
        region: 'eu',
      });
    },
  );

  test("an instance's first request of a token with tags reads their budgets just after the gate (docs/tags.md); its next ones, beside it", async () => {
    const created = await manage('POST', '/api/tokens', { name: 'tagged, first seen' });
    const token = created.token as string;
    proxy.secrets.add(token);
    await manage('PUT', `/api/tokens/${created.token_id as string}`, { tags: { team: 'first-seen' } });
    // The gate's answer brings the tags; only then are their budgets known to read: two round trips, this once.
    const first = await callsOf('pass-through', false, 'first of a tagged token', { token });
    expect(first.before).toHaveLength(2);
    expect(inOneWave(first.before)).toBe(false);
    const next = await callsOf('pass-through', false, 'next of a tagged token', { token }, 2);
    expect(next.before).toHaveLength(2);
    expect({ oneWave: inOneWave(next.before), before: next.before }).toMatchObject({ oneWave: true });
  });
});
