/**
 * Spooled rows survive a stop in the middle of their replay: SIGTERM suspends the replay and
 * leaves the rest in the claimed `.replaying` file, holding only them; SIGKILL leaves the claimed `.replaying` file, which the next
 * start replays first. Either way every row ends up in the table exactly once, and the rollups
 * count it once (after SIGKILL, at most the one row being written at that instant can miss its
 * rollup; none is counted twice).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newRequestId } from '../../lambda/http/request';
import { tableNames } from '../../lambda/store/tables';
import type { UsageRow } from '../../lambda/usage/usage-row';
import { rowPartitions } from '../../lambda/usage/dynamodb/row-shards';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { callProxy } from './support/requests';
import { sdkDocumentClient } from './support/dynamo';
import { spawnServer, type ServerProcess } from './support/server-process';
import { EVENTUALLY_MS, eventually } from '../support/patience';

// Three server starts and 600 rows through the store per test: half a minute on a quiet machine, minutes when CI shares it.
jest.setTimeout(600_000);

/**
 * Enough that the stop, sent as soon as the first row is in the table, lands long before the last:
 * the rows are written one at a time, and the test checks the premise (some stored, not all).
 */
const ROWS = 600;
let fakes: AllFakes;
beforeAll(async () => {
  fakes = await startAllFakes();
});
afterAll(() => fakes?.close());

async function storedIds(tablePrefix: string, accountId: string): Promise<string[]> {
  const doc = sdkDocumentClient();
  const ids: string[] = [];
  for (const partition of rowPartitions(accountId)) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new QueryCommand({
          TableName: tableNames({}, tablePrefix).usageLogs,
          KeyConditionExpression: 'account_id = :account',
          ExpressionAttributeValues: { ':account': partition },
          ProjectionExpression: 'id',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      ids.push(...(page.Items ?? []).map((item) => item.id as string));
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return ids;
}

/** A server with an account, stopped again, and a spool file of ROWS rows for that account in its DATA_DIR. */
async function spooledDataDir(): Promise<{
  dataDir: string;
  tablePrefix: string;
  accountId: string;
  token: string;
  ids: string[];
  cleanUp(): void;
}> {
  const setup = await spawnServer({});
  const created = await fetch(`${setup.url}/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.adminKey}` },
    body: '{}',
  });
  const {
    account_id: accountId,
    token,
    token_id: tokenId,
  } = (await created.json()) as { account_id: string; token: string; token_id: string };
  setup.child.kill('SIGTERM');
  expect(await setup.exited).toBe(0);
  const now = Date.now();
  const rows: UsageRow[] = Array.from({ length: ROWS }, (_, i) => {
    const arrived = now - 60_000 + i;
    return {
      account_id: accountId,
      id: newRequestId(arrived),
      ts: new Date(arrived).toISOString(),
      provider: 'prov-b',
      kind: 'chat',
      model: 'gpt-4o-mini-2024-07-18',
      input_tokens: 10,
      output_tokens: 5,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: 0,
      cost_nanos: 0,
      priced: false,
      latency_ms: 12,
      status_code: 200,
      cached: false,
      saved_usd: 0,
      saved_nanos: 0,
      stream: false,
      mode: 'stored',
      token_id: tokenId,
    };
  });
  writeFileSync(join(setup.dataDir, 'row-spool.jsonl'), rows.map((row) => JSON.stringify(row) + '\n').join(''));
  return {
    dataDir: setup.dataDir,
    tablePrefix: setup.tablePrefix,
    accountId,
    token,
    ids: rows.map((row) => row.id),
    cleanUp: () => setup.cleanUp(),
  };
}

/** Starts a server on the spooled data and stops it with `signal` once part of the rows are in the table. */
async function stopMidReplay(
  spool: Awaited<ReturnType<typeof spooledDataDir>>,
  signal: NodeJS.Signals,
): Promise<number> {
  const server = await spawnServer({}, { dataDir: spool.dataDir, tablePrefix: spool.tablePrefix });
  try {
    await eventually(
      async () => ((await storedIds(spool.tablePrefix, spool.accountId)).length > 0 ? true : undefined),
      EVENTUALLY_MS,
      25,
    );
    server.child.kill(signal);
    await server.exited;
    const stored = (await storedIds(spool.tablePrefix, spool.accountId)).length;
    // The premise of the test: the stop came while rows were still waiting.
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(ROWS);
    return stored;
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  }
}

/** The overview's request count per provider, for the account of this token. */
async function requestsByProvider(server: ServerProcess, token: string): Promise<Record<string, number>> {
  const stats = await fetch(`${server.url}/api/stats`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await stats.json()) as { by_provider?: Array<{ provider: string; requests: number }> };
  return Object.fromEntries((body.by_provider ?? []).map((slice) => [slice.provider, slice.requests]));
}

/** Starts a server on the spool, waits until every row is stored, and returns what the overview counts of the spooled rows (prov-b). */
async function replayToTheEnd(
  spool: Awaited<ReturnType<typeof spooledDataDir>>,
): Promise<{ ids: string[]; requests: number; server: ServerProcess }> {
  const server = await spawnServer({ ...fakes.env }, { dataDir: spool.dataDir, tablePrefix: spool.tablePrefix });
  // One store read and one write per row, one row at a time: on a host shared with other jobs, that takes minutes.
  // The replay is over when its files are gone (rows left over would go back to the spool file). The
  // wait watches the files: reading every stored id on each poll would slow the replay it waits for.
  const spoolFiles = ['row-spool.jsonl', 'row-spool.jsonl.replaying'].map((name) => join(spool.dataDir, name));
  await eventually(async () => (spoolFiles.some((file) => existsSync(file)) ? undefined : true), 5 * EVENTUALLY_MS);
  const ids = await storedIds(spool.tablePrefix, spool.accountId);
  // Rollups follow the rows: the stream consumer folds the usage stream in order. A request on another
  // provider, written after every replayed row, marks the end: once the overview counts it, it has
  // folded everything before it, so the count of the spooled rows is final.
  const marker = await callProxy(
    { proxyBase: `${server.url}/api/proxy` },
    { provider: 'prov-e', token: spool.token, providerKey: 'client-own-key-spool-marker', prompt: 'after the replay' },
  );
  expect(marker.status).toBe(200);
  const counted = await eventually(async () => {
    const byProvider = await requestsByProvider(server, spool.token);
    return byProvider['prov-e'] === 1 ? byProvider : undefined;
  });
  return { ids, requests: counted?.['prov-b'] ?? -1, server };
}

test('SIGTERM during the replay: the rest stays claimed, the next start writes every row exactly once', async () => {
  const spool = await spooledDataDir();
  try {
    const before = await stopMidReplay(spool, 'SIGTERM');
    expect(existsSync(join(spool.dataDir, 'row-spool.jsonl'))).toBe(false);
    const left = readFileSync(join(spool.dataDir, 'row-spool.jsonl.replaying'), 'utf8').split('\n').filter(Boolean);
    expect(left).toHaveLength(ROWS - before);

    const { ids, requests, server } = await replayToTheEnd(spool);
    expect(ids.sort()).toEqual([...spool.ids].sort());
    expect(requests).toBe(ROWS);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  } finally {
    spool.cleanUp();
  }
});

test('SIGKILL during the replay: the claimed file is replayed first on the next start, every row exactly once, none counted twice', async () => {
  const spool = await spooledDataDir();
  try {
    await stopMidReplay(spool, 'SIGKILL');
    expect(existsSync(join(spool.dataDir, 'row-spool.jsonl.replaying'))).toBe(true);

    const { ids, requests, server } = await replayToTheEnd(spool);
    expect(ids.sort()).toEqual([...spool.ids].sort());
    expect(requests).toBeLessThanOrEqual(ROWS);
    expect(requests).toBeGreaterThanOrEqual(ROWS - 1);
    expect(existsSync(join(spool.dataDir, 'row-spool.jsonl'))).toBe(false);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  } finally {
    spool.cleanUp();
  }
});
