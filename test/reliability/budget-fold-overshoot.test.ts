/**
 * The overshoot a budget allows now that spend is folded from the usage-logs stream
 * (docs/budgets.md, "Overshoot"): a request is checked against the spend folded so far, so what
 * was admitted between folds can pass the limit, and nothing more. Two server processes on one
 * store, their own consumers off; the test drives the local stream consumer itself, one fold per
 * round of concurrent requests, as the consumer Lambda folds once per batching window. The
 * refusals must start with the first round after the fold that recorded the limit reached, and the
 * overshoot stay within one round's requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lambda/wiring/config';
import { buildFoldDeps, buildLocalStoreClients } from '../../lambda/wiring/deps';
import { localStreamPoller } from '../../lambda/local/stats-consumer';
import type { StreamPoller } from '../../lambda/local/stream-poller';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';
import { runPool } from './support/pool';
import { callProxy, expectChatError } from './support/requests';
import { waitForRowCount, type Row } from './support/rows';

jest.setTimeout(300_000);

/** Requests in flight at once in a round: the requests one batching window gathers. */
const IN_FLIGHT = 8;
const dataDir = mkdtempSync(join(tmpdir(), 'fold-overshoot-'));
const consumerDir = mkdtempSync(join(tmpdir(), 'fold-overshoot-consumer-'));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let fakes: AllFakes;
let first: ProxyServer;
let second: ProxyServer;
let consumer: StreamPoller;

beforeAll(async () => {
  fakes = await startAllFakes({ behaviour: { usage: 'random' }, seed: 3838 });
  const tablePrefix = `fos${Date.now().toString(36)}-`;
  const env = { RATE_LIMIT_PER_MINUTE: '10000000', DATA_DIR: dataDir, STATS_CONSUMER: 'off' };
  [first, second] = [await startProxy({ fakes, tablePrefix, env }), await startProxy({ fakes, tablePrefix, env })];
  const config = loadConfig({
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
    TABLE_PREFIX: tablePrefix,
    DATA_DIR: consumerDir,
  });
  consumer = localStreamPoller(buildFoldDeps(config, quiet), buildLocalStoreClients(config));
});

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await fakes?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(consumerDir, { recursive: true, force: true });
});

const cost = (rows: Row[]) => rows.reduce((sum, row) => sum + (row.cost_nanos as number), 0);

async function requesterSpent(account: Account): Promise<number> {
  const { requesters } = (await (await first.api('/api/budgets', { token: account.token })).json()) as {
    requesters: Array<{ requester: string; spent_usd: number }>;
  };
  return Math.round(requesters.find((r) => r.requester === 'batch')!.spent_usd * 1e9);
}

test(`a requester budget over two instances, ${IN_FLIGHT} requests a round, one fold a round: refused from the round after the fold that reached the limit, the overshoot within one round`, async () => {
  const account = await first.createAccount('fold-overshoot');
  await first.saveKey(account.token, 'prov-b');
  second.secrets.add(account.token);
  const send = (round: number) =>
    runPool(IN_FLIGHT, IN_FLIGHT, (index) =>
      callProxy(index % 2 ? second : first, {
        provider: 'prov-b',
        token: account.token,
        prompt: `round ${round} request ${index}`,
        headers: { 'x-proxy-user': 'batch' },
      }),
    );
  // One round to learn a request's cost, then a budget of about three rounds.
  expect((await send(0)).every((result) => result.status === 200)).toBe(true);
  const probe = await waitForRowCount(first, account.token, IN_FLIGHT);
  const limitNanos = Math.ceil((cost(probe) * 3) / 1000) * 1000;
  const put = await first.api('/api/budgets/requesters/batch', {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: limitNanos / 1e9, period: 'month' },
  });
  expect(put.status).toBe(200);
  await consumer.catchUp();

  let rows = IN_FLIGHT;
  let reachedAtFold: number | undefined;
  let refusedRound: number | undefined;
  for (let round = 1; round <= 12 && refusedRound === undefined; round++) {
    const results = await send(round);
    const admitted = results.filter((result) => result.status === 200).length;
    // Every request of a round is judged by the same folded spend: all admitted, or all refused.
    expect([0, IN_FLIGHT]).toContain(admitted);
    if (admitted === 0) {
      refusedRound = round;
      for (const result of results) {
        expect(result.status).toBe(402);
        expect(expectChatError(result.text).message).toContain('requester "batch"');
      }
    }
    rows += IN_FLIGHT;
    // The round's rows are stored (after their responses), then the consumer's batch folds them.
    await waitForRowCount(first, account.token, rows);
    await consumer.catchUp();
    if (reachedAtFold === undefined && (await requesterSpent(account)) >= limitNanos) reachedAtFold = round;
  }

  // Refused from the first round after the fold that recorded the limit reached, not before, not later.
  expect(reachedAtFold).toBeDefined();
  expect(refusedRound).toBe(reachedAtFold! + 1);
  // The overshoot: only the round admitted while the spend it crossed with was not yet folded.
  const all = await waitForRowCount(first, account.token, rows);
  const admittedRows = all.filter((row) => row.requester === 'batch' && row.status_code === 200);
  const spent = await requesterSpent(account);
  expect(spent).toBe(cost(admittedRows));
  const dearest = Math.max(...admittedRows.map((row) => row.cost_nanos as number));
  expect(spent - limitNanos).toBeLessThanOrEqual(IN_FLIGHT * dearest);
  expect(spent).toBeGreaterThanOrEqual(limitNanos);
});
