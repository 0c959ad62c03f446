/**
 * Two local servers sharing one DATA_DIR (docs/operations.md, "Two local instances on one store")
 * share its row spool. Before, during a 75 s store outage their replays each handed the same
 * claimed rows back, and 40 spooled rows grew to 487 lines. Now one server replays at a time, and they
 * take turns: through an outage that outlasts several replay rounds of both, the spool holds each row
 * once, and when the store is back every row is in the table once.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { EVENTUALLY_MS, eventually } from '../support/patience';
import { callProxy } from './support/requests';
import { allRows } from './support/rows';
import { spawnServer, type ServerProcess } from './support/server-process';
import { startStoreGate, type StoreGate } from './support/store-gate';

jest.setTimeout(600_000);

const PER_SERVER = 10;
const WAITING = 'spooled usage rows still waiting for the store';

let fakes: AllFakes;
let gate: StoreGate;
let first: ServerProcess;
let second: ServerProcess;

beforeAll(async () => {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: the jest global setup starts DynamoDB Local');
  fakes = await startAllFakes();
  gate = await startStoreGate(endpoint);
  const env = { ...fakes.env, DYNAMODB_ENDPOINT: gate.endpoint };
  first = await spawnServer(env);
  // Same folder, same tables; one stream consumer is enough for the two.
  second = await spawnServer(
    { ...env, STATS_CONSUMER: 'off' },
    { dataDir: first.dataDir, tablePrefix: first.tablePrefix },
  );
});
afterAll(async () => {
  gate?.set('up');
  for (const server of [second, first]) {
    if (!server) continue;
    server.child.kill('SIGTERM');
    await server.exited;
  }
  first?.cleanUp();
  await gate?.close();
  await fakes?.close();
});

/** Every row in the spool files of the shared folder, by request id. */
function spooledIds(dataDir: string): string[] {
  return ['row-spool.jsonl', 'row-spool.jsonl.replaying'].flatMap((name) => {
    const path = join(dataDir, name);
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { id: string }).id);
  });
}

const timesPrinted = (server: ServerProcess, text: string) => server.output().split(text).length - 1;

test('two servers on one spool through an outage: the spool never holds a row twice, the table ends with each row once', async () => {
  const created = await fetch(`${first.url}/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${first.adminKey}` },
    body: '{}',
  });
  const { token } = (await created.json()) as { token: string };

  // Streams held open at the provider, so that every request is forwarded before the store goes down
  // and every row is written while it is down.
  const fake = fakes.fakes['prov-e'];
  let release!: () => void;
  fake.always({ firstEventWhen: new Promise<void>((resolve) => (release = resolve)) });
  const seen = fake.requests.length;
  const calls = [first, second].flatMap((server) =>
    Array.from({ length: PER_SERVER }, (_, i) =>
      callProxy(
        { proxyBase: `${server.url}/api/proxy` },
        { provider: 'prov-e', token, providerKey: 'client-own-key-shared-spool', stream: true, prompt: `row ${i}` },
      ),
    ),
  );
  await fake.waitForRequests(seen + 2 * PER_SERVER);
  gate.set('down');
  release();
  const answers = await Promise.all(calls);
  fake.always(undefined);
  expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  const ids = answers.map((answer) => answer.requestId);

  // Every row retried, then spooled; then both servers try to replay the spool, round after round.
  await eventually(async () => (spooledIds(first.dataDir).length === ids.length ? true : undefined), 3 * EVENTUALLY_MS);
  const rounds = (server: ServerProcess) => timesPrinted(server, WAITING);
  const [firstBefore, secondBefore] = [rounds(first), rounds(second)];
  // They take turns: each waits a full interval after its own pass (row-spool.ts), so neither runs
  // ahead by more than a pass, or two when timers slip on a busy machine.
  let largest = 0;
  let lead = 0;
  await eventually(
    async () => {
      largest = Math.max(largest, spooledIds(first.dataDir).length);
      const [firstRounds, secondRounds] = [rounds(first) - firstBefore, rounds(second) - secondBefore];
      lead = Math.max(lead, Math.abs(firstRounds - secondRounds));
      if (lead > 2) return false;
      return firstRounds >= 3 && secondRounds >= 3 ? true : undefined;
    },
    5 * EVENTUALLY_MS,
    50,
  );
  expect(lead).toBeLessThanOrEqual(2);
  const held = spooledIds(first.dataDir);
  expect(largest).toBeLessThanOrEqual(ids.length);
  expect(held.sort()).toEqual([...ids].sort());

  gate.set('up');
  await eventually(async () => (spooledIds(first.dataDir).length === 0 ? true : undefined), 3 * EVENTUALLY_MS);
  const stored = (await allRows({ api: (path, init) => apiCall(first, path, init) }, token)).map((row) => row.id);
  expect(stored.sort()).toEqual([...ids].sort());
});

function apiCall(server: ServerProcess, path: string, init: { token?: string } = {}): Promise<Response> {
  return fetch(server.url + path, { headers: { authorization: `Bearer ${init.token ?? server.adminKey}` } });
}
