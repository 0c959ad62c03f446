/**
 * Load: many mixed requests at once against one local server lose no row and
 * no token, and the rollups end up exactly equal to the rows although their
 * consumer (a separate process folding the usage stream) is killed and
 * restarted halfway. LOAD_REQUESTS (default 600) and LOAD_CONCURRENCY
 * (default 64) size the run; `npm run test:load` runs 10,000.
 */
import { startDynamoDbLocal, type RunningDynamoDbLocal } from '../../lambda/local/dynamodb-local';
import { seededRandom } from '../fakes/behaviour';
import { startAllFakes, type AllFakes, type ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { callProxy, PROVIDERS, streamEndedCleanly, type CallResult } from './support/requests';
import { allRows, statsTotals, waitForRowCount, type Row } from './support/rows';
import { runPool } from './support/pool';
import { startStatsConsumer, type StatsConsumerProcess } from './support/stats-consumer';
import { EVENTUALLY_MS, eventually } from '../support/patience';

const REQUESTS = Number(process.env.LOAD_REQUESTS ?? 600);
const CONCURRENCY = Number(process.env.LOAD_CONCURRENCY ?? 64);
/** Prompts drawn from this small pool repeat, so cached requests hit. */
const CACHED_PROMPTS = 8;

jest.setTimeout(Math.max(300_000, REQUESTS * 60));

interface Planned {
  provider: ProviderId;
  stream: boolean;
  passThrough: boolean;
  cache?: 'true' | 'refresh';
  prompt: string;
}

function plan(count: number): Planned[] {
  const random = seededRandom(20_261_121);
  return Array.from({ length: count }, (_, index) => {
    const provider = PROVIDERS[index % PROVIDERS.length]!;
    const roll = random();
    const cache = roll < 0.25 ? 'true' : roll < 0.28 ? 'refresh' : undefined;
    return {
      provider,
      stream: random() < 0.5,
      passThrough: random() < 0.3,
      cache,
      prompt: cache ? `cached prompt ${Math.floor(random() * CACHED_PROMPTS)}` : `load request ${index}`,
    };
  });
}

let fakes: AllFakes;
let proxy: ProxyServer;
let consumer: StatsConsumerProcess | undefined;
let store: RunningDynamoDbLocal;
const tablePrefix = `load${Date.now().toString(36)}-`;
const passThroughKeys = PROVIDERS.map(
  (provider) => `${provider}-client-own-key-${Math.random().toString(36).slice(2)}`,
);

beforeAll(async () => {
  // A DynamoDB Local of this file's own. The run's shared one also serves the other workers' files,
  // and one of them creating its tables there can hold every call for seconds: this file's requests
  // would be refused by the proxy's store deadline for another file's work.
  store = await startDynamoDbLocal();
  const onStore = { DYNAMODB_ENDPOINT: store.endpoint };
  fakes = await startAllFakes({ behaviour: { usage: 'random' }, seed: 4242 });
  // The per-token limit is not under test here; every request must reach the pipeline's end.
  // The rollups are folded by a separate consumer process (as by the consumer Lambda in AWS), so it can be killed mid-run.
  proxy = await startProxy({
    fakes,
    tablePrefix,
    env: { ...onStore, RATE_LIMIT_PER_MINUTE: '10000000', STATS_CONSUMER: 'off' },
  });
  consumer = await startStatsConsumer(tablePrefix, undefined, onStore);
  for (const key of passThroughKeys) proxy.secrets.add(key);
  await warmUp();
  fakes.reset();
});

/**
 * A fresh DynamoDB Local starts in a cold JVM: its first burst of calls, beside the other workers'
 * files on a busy machine, can outlast the proxy's 10 s store budget, a false outage no deployed
 * store has. A few requests from another account (its rows and rollups apart from the measured
 * one's) bring it to speed first.
 */
async function warmUp(): Promise<void> {
  const other = await proxy.createAccount('warm-up');
  for (const provider of PROVIDERS) await proxy.saveKey(other.token, provider);
  const results = await runPool(48, 8, (index) =>
    callRetryingRefusals({
      provider: PROVIDERS[index % PROVIDERS.length]!,
      token: other.token,
      prompt: `warm-up ${index}`,
    }),
  );
  expect(results.filter((result) => result.status !== 200).map((result) => result.status)).toEqual([]);
}

afterAll(async () => {
  await consumer?.kill();
  await proxy?.stop();
  await fakes?.close();
  await store?.stop();
});

/**
 * A call as the providers' SDKs make it: a 503 with `Retry-After` (the proxy failing closed while
 * its store is slow, here a DynamoDB Local sharing two busy cores with the rest of the suite) is
 * tried again after that wait, at most twice. Such a refusal forwards nothing and leaves no row.
 */
async function callRetryingRefusals(call: Parameters<typeof callProxy>[1]): Promise<CallResult> {
  for (let retries = 0; ; retries++) {
    const result = await callProxy(proxy, call);
    const wait = Number(result.headers.get('retry-after'));
    if (result.status !== 503 || !wait || retries === 2) return result;
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
}

test(`${REQUESTS} mixed requests at concurrency ${CONCURRENCY}: every answer whole, one row each, every token accounted for`, async () => {
  const planned = plan(REQUESTS);
  const token = proxy.account.token;
  let restarted: Promise<void> | undefined;
  const results: CallResult[] = await runPool(REQUESTS, CONCURRENCY, (index) => {
    const p = planned[index]!;
    // Halfway: the consumer dies without warning (mid-batch, checkpoint unsaved) and comes back a moment later.
    if (index === Math.floor(REQUESTS / 2) && !restarted) {
      restarted = consumer!
        .kill()
        .then(() => new Promise((resolve) => setTimeout(resolve, 500)))
        .then(async () => {
          consumer = await startStatsConsumer(tablePrefix, undefined, { DYNAMODB_ENDPOINT: store.endpoint });
        });
    }
    return callRetryingRefusals({
      provider: p.provider,
      token,
      providerKey: p.passThrough ? passThroughKeys[index % passThroughKeys.length] : undefined,
      stream: p.stream,
      prompt: p.prompt,
      cache: p.cache,
      headers: { 'x-proxy-user': `user-${index % 7}` },
    });
  });

  // Every answer is the provider's, whole.
  const failures = results
    .map((result, index) => ({ index, status: result.status, body: result.text.slice(0, 200) }))
    .filter(
      ({ index, status }) =>
        status !== 200 ||
        (planned[index]!.stream
          ? !streamEndedCleanly(planned[index]!.provider, results[index]!.text)
          : !isJson(results[index]!.text)),
    );
  expect(failures.slice(0, 5)).toEqual([]);

  const ids = results.map((result) => result.requestId);
  expect(new Set(ids).size).toBe(REQUESTS);
  const hits = results.filter((result) => result.headers.get('x-proxy-cache') === 'HIT').length;
  expect(hits).toBeGreaterThan(0);

  // Exactly one row per request: no loss, no duplicate.
  const rows = await waitForRowCount(proxy, token, REQUESTS, 60_000 + REQUESTS * 10);
  expect(rows.length).toBe(REQUESTS);
  expect(new Set(rows.map((row) => row.id))).toEqual(new Set(ids));

  // The fakes served every request that was not a hit, and the rows hold exactly the tokens they reported.
  const sent = fakes.sentUsage();
  expect(sent.responses).toBe(REQUESTS - hits);
  const logged = sum(rows);
  expect(logged).toEqual({
    inputTokens: sent.inputTokens,
    outputTokens: sent.outputTokens,
    cacheReadTokens: sent.cacheReadTokens,
    cacheWriteTokens: sent.cacheWriteTokens,
  });
  const cachedRows = rows.filter((row) => row.cached);
  expect(cachedRows.length).toBe(hits);
  expect(cachedRows.every((row) => row.input_tokens === 0 && row.output_tokens === 0 && row.cost_usd === 0)).toBe(true);
  expect(rows.every((row) => row.status_code === 200 && !row.error)).toBe(true);

  await restarted;
  expect(restarted).toBeDefined();
  // The overview's rollups agree with the rows exactly: nothing lost, nothing counted twice across the restart.
  let totals = await statsTotals(proxy, token);
  await eventually(
    async () => {
      totals = await statsTotals(proxy, token);
      return totals.requests >= REQUESTS ? true : undefined;
    },
    EVENTUALLY_MS + REQUESTS * 5,
    200,
  );
  expect({
    requests: totals.requests,
    input: totals.input_tokens,
    output: totals.output_tokens,
    hits: totals.cache_hits,
    errors: totals.errors,
  }).toEqual({
    requests: REQUESTS,
    input: sent.inputTokens,
    output: sent.outputTokens,
    hits,
    errors: 0,
  });
  // Nothing arrives late: no further row, and a further pass of the consumer adds nothing. One more
  // request, folded after everything before it, shows that pass has happened: the figures move by it alone.
  expect((await allRows(proxy, token)).length).toBe(REQUESTS);
  const marker = await callProxy(proxy, { provider: 'prov-b', token, prompt: 'after the load' });
  expect(marker.status).toBe(200);
  const withMarker = fakes.sentUsage();
  const final = await eventually(async () => {
    const current = await statsTotals(proxy, token);
    return current.requests > REQUESTS ? current : undefined;
  });
  expect({ requests: final?.requests, input: final?.input_tokens, output: final?.output_tokens }).toEqual({
    requests: REQUESTS + 1,
    input: withMarker.inputTokens,
    output: withMarker.outputTokens,
  });
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function sum(rows: Row[]) {
  return rows.reduce(
    (total, row) => ({
      inputTokens: total.inputTokens + row.input_tokens,
      outputTokens: total.outputTokens + row.output_tokens,
      cacheReadTokens: total.cacheReadTokens + row.cache_read_tokens,
      cacheWriteTokens: total.cacheWriteTokens + row.cache_write_tokens,
    }),
    { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  );
}
