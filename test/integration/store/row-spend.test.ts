import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import { DynamoBudgetStore } from '../../../lambda/budgets/dynamodb/budget-store';
import { DynamoSpendFold } from '../../../lambda/budgets/dynamodb/spend-fold';
import { StreamPoller } from '../../../lambda/local/stream-poller';
import type { Logger } from '../../../lambda/base/logger';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import { DynamoUsageStats } from '../../../lambda/usage/dynamodb/usage-stats';
import { rowPartitions } from '../../../lambda/usage/dynamodb/row-shards';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { notingClient } from '../../support/noting-client';
import { createTestTables } from '../../support/tables';

/**
 * A row is one plain put; its spend is folded in by the stream consumer (here the local one, on
 * DynamoDB Local's stream): however often the same row is written (a retry, a spool replay, a
 * second write racing the first), the row is stored once and its cost is in the spend once.
 */
let tables: Awaited<ReturnType<typeof createTestTables>>;
let usageLog: DynamoUsageLog;
let budgets: DynamoBudgetStore;
let streams: DynamoDBStreamsClient;
let poller: StreamPoller;
const dataDir = mkdtempSync(join(tmpdir(), 'row-spend-'));
const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
/** The spend fold's writes to the accounts table, as the consumer sends them. */
const spendWrites: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  tables = await createTestTables();
  usageLog = new DynamoUsageLog(tables.clients.doc, tables.tables.usageLogs);
  budgets = new DynamoBudgetStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
  streams = new DynamoDBStreamsClient({
    region: 'eu-west-1',
    endpoint: process.env.DYNAMODB_ENDPOINT,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const noting = {
    send: ((command: StoreCommand) => {
      if (command.operation === 'UpdateItem') spendWrites.push(command.input.Key as Record<string, unknown>);
      return tables.clients.doc.send(command as never);
    }) as typeof tables.clients.doc.send,
  };
  const spendFold = new DynamoSpendFold(noting, tables.tables.accounts);
  poller = new StreamPoller({
    raw: tables.clients.raw,
    streams,
    table: tables.tables.usageLogs,
    stats: new DynamoUsageStats(tables.clients.doc, tables.tables.usageStats),
    foldSpend: (rows) => spendFold.fold(rows),
    checkpointFile: join(dataDir, 'stream-checkpoints.json'),
    log: silent,
  });
});
afterAll(() => {
  streams.destroy();
  tables.clients.raw.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

/** What the consumer does in the background: reads the stream to its end and folds it. */
const fold = () => poller.catchUp();

const year = new Date().getUTCFullYear() + 1;
const at = Date.parse(`${year}-03-10T12:00:00.000Z`);
let count = 0;

function row(accountId: string, costNanos: number, requester?: string): UsageRow {
  const ts = new Date(at + count).toISOString();
  const id = `${(at + count).toString(36).padStart(9, '0')}-${String(count++).padStart(16, '0')}`;
  return {
    ...{
      account_id: accountId,
      id,
      ts,
      provider: 'prov-b',
      kind: 'chat',
      model: 'm',
      input_tokens: 10,
      output_tokens: 5,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    },
    ...{
      cost_nanos: costNanos,
      cost_usd: costNanos / 1e9,
      priced: true,
      latency_ms: 5,
      status_code: 200,
      cached: false,
      saved_usd: 0,
      saved_nanos: 0,
    },
    ...{ stream: false, mode: 'stored', token_id: `${accountId}_tok`, ...(requester ? { requester } : {}) },
  };
}

async function spend(
  accountId: string,
  requester?: string,
): Promise<{ token: number; requester?: number; total: number }> {
  const token = { kind: 'token' as const, tokenId: `${accountId}_tok` };
  await budgets.setBudget(accountId, token, { limitNanos: 10 ** 12, period: 'month' }, 'x');
  const month = (await budgets.statusOf(accountId, token, at))!;
  await budgets.setBudget(accountId, token, { limitNanos: 10 ** 12, period: 'total' }, 'x');
  const total = (await budgets.statusOf(accountId, token, at))!;
  if (!requester) return { token: month.spentNanos, total: total.spentNanos };
  const subject = { kind: 'requester' as const, requester };
  await budgets.setBudget(accountId, subject, { limitNanos: 10 ** 12, period: 'day' }, 'x');
  const day = await budgets.statusOf(accountId, subject, at);
  return { token: month.spentNanos, requester: day!.spentNanos, total: total.spentNanos };
}

async function storedRows(accountId: string): Promise<number> {
  let count = 0;
  for (const partition of rowPartitions(accountId)) {
    const result = await tables.clients.doc.send({
      operation: 'Query',
      input: {
        TableName: tables.tables.usageLogs,
        KeyConditionExpression: 'account_id = :a',
        ExpressionAttributeValues: { ':a': partition },
        Select: 'COUNT',
      },
    });
    count += result.Count ?? 0;
  }
  return count;
}

test('the same row written again, after or alongside the first write, is stored and counted once', async () => {
  const account = 'acct-again';
  const first = row(account, 1_500, 'ana');
  await usageLog.write(first);
  await usageLog.write(first);
  // Racing writes of one row, and another row, in the same tick.
  const second = row(account, 700, 'ana');
  await Promise.all([usageLog.write(second), usageLog.write(second), usageLog.write(first)]);
  await fold();
  expect(await storedRows(account)).toBe(2);
  expect(await spend(account, 'ana')).toEqual({ token: 2_200, requester: 2_200, total: 2_200 });
  // The stream read again from its start (a consumer that lost its checkpoint) counts nothing twice.
  rmSync(join(dataDir, 'stream-checkpoints.json'), { force: true });
  await new StreamPoller({
    raw: tables.clients.raw,
    streams,
    table: tables.tables.usageLogs,
    stats: new DynamoUsageStats(tables.clients.doc, tables.tables.usageStats),
    foldSpend: (rows) => new DynamoSpendFold(tables.clients.doc, tables.tables.accounts).fold(rows),
    checkpointFile: join(dataDir, 'stream-checkpoints.json'),
    log: silent,
  }).catchUp();
  expect(await spend(account, 'ana')).toEqual({ token: 2_200, requester: 2_200, total: 2_200 });
});

test('many rows at once: each stored and counted once, per requester too', async () => {
  const account = 'acct-many';
  const rows = Array.from({ length: 57 }, (_, i) => row(account, 100 + i, i % 2 ? 'ana' : 'ben'));
  await Promise.all(rows.map((r) => usageLog.write(r)));
  await fold();
  expect(await storedRows(account)).toBe(57);
  const sum = (list: UsageRow[]) => list.reduce((total, r) => total + r.cost_nanos, 0);
  expect(await spend(account, 'ana')).toEqual({
    token: sum(rows),
    requester: sum(rows.filter((r) => r.requester === 'ana')),
    total: sum(rows),
  });
});

test('a row without a cost is stored without touching any counter', async () => {
  const account = 'acct-free';
  await usageLog.write(row(account, 0, 'cy'));
  await fold();
  expect(await storedRows(account)).toBe(1);
  const counter = await tables.clients.doc.send({
    operation: 'GetItem',
    input: { TableName: tables.tables.accounts, Key: { pk: `ACCOUNT#${account}#T#${account}_tok`, sk: 'BUDGET' } },
  });
  expect(counter.Item).toBeUndefined();
});

test('the usage log writes a row alone, one put; the consumer writes each subject once per batch, whatever the rows', async () => {
  const account = 'acct-shared';
  const sent: string[] = [];
  // The real client, with each command it sends noted.
  const noting = notingClient(tables.clients.doc, sent);
  const log = new DynamoUsageLog(noting, tables.tables.usageLogs);
  const rows = Array.from({ length: 25 }, (_, i) => row(account, 1_000 + i, 'ana'));
  await Promise.all(rows.map((r) => log.write(r)));
  expect(sent).toEqual(rows.map(() => 'PutItem'));
  spendWrites.length = 0;
  await fold();
  const ofAccount = spendWrites.map((key) => String(key.pk)).filter((pk) => pk.startsWith(`ACCOUNT#${account}#`));
  // Token and requester: at most one write each per page the consumer read (here the rows fit in one or two).
  expect(ofAccount.length).toBeGreaterThanOrEqual(2);
  expect(ofAccount.length).toBeLessThanOrEqual(4);
  expect(await storedRows(account)).toBe(25);
  expect((await spend(account, 'ana')).token).toBe(rows.reduce((total, r) => total + r.cost_nanos, 0));
});

test('a failed alert check reads the page again: the alerts see its rows again, the spend counts them once', async () => {
  const account = 'acct-alert-retry';
  const rows = [row(account, 900, 'dee'), row(account, 400, 'dee')];
  await Promise.all(rows.map((r) => usageLog.write(r)));
  /** The ids of this account's rows each alert check was given, in order. */
  const checked: string[][] = [];
  let failuresLeft = 1;
  // Its own checkpoint: it reads the whole stream, the other tests' rows too (counted once already).
  const alerting = new StreamPoller({
    raw: tables.clients.raw,
    streams,
    table: tables.tables.usageLogs,
    stats: new DynamoUsageStats(tables.clients.doc, tables.tables.usageStats),
    foldSpend: (folded) => new DynamoSpendFold(tables.clients.doc, tables.tables.accounts).fold(folded),
    checkAlerts: (page) => {
      checked.push(page.filter((r) => r.account_id === account).map((r) => r.id));
      if (failuresLeft-- > 0) return Promise.reject(new Error('alert queue unavailable'));
      return Promise.resolve();
    },
    checkpointFile: join(dataDir, 'alerting-checkpoints.json'),
    log: silent,
  });
  await alerting.catchUp();
  await alerting.catchUp();

  const ids = rows.map((r) => r.id).sort();
  const withRows = checked.filter((page) => page.length > 0).map((page) => [...page].sort());
  // Seen by the check that failed and again by a later one, which passed.
  expect(withRows.length).toBeGreaterThanOrEqual(2);
  for (const page of withRows) expect(page).toEqual(ids);
  expect(failuresLeft).toBeLessThan(0);
  expect(await spend(account, 'dee')).toEqual({ token: 1_300, requester: 1_300, total: 1_300 });
});
