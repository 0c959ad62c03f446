import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import { DynamoBudgetStore, spendChanges } from '../../../lambda/budgets/dynamodb/budget-store';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import { rowPartitions } from '../../../lambda/usage/dynamodb/row-shards';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { createTestTables } from '../../support/tables';

/**
 * A row with a cost and the spend it adds are one transaction on DynamoDB
 * Local: however often the same row is written (a retry, a spool replay, a
 * second write racing the first), the row is stored once and its cost is in
 * the spend once.
 */
let tables: Awaited<ReturnType<typeof createTestTables>>;
let usageLog: DynamoUsageLog;
let budgets: DynamoBudgetStore;

beforeAll(async () => {
  tables = await createTestTables();
  usageLog = new DynamoUsageLog(tables.clients.doc, tables.tables.usageLogs, {
    table: tables.tables.accounts,
    changes: spendChanges,
  });
  budgets = new DynamoBudgetStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
});
afterAll(() => tables.clients.raw.destroy());

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
  expect(await storedRows(account)).toBe(2);
  expect(await spend(account, 'ana')).toEqual({ token: 2_200, requester: 2_200, total: 2_200 });
});

test('a transaction of several rows, one of them already stored: the others are written and counted, that one is not counted again', async () => {
  const account = 'acct-mixed';
  const stored = row(account, 1_000);
  await usageLog.write(stored);
  const fresh = [row(account, 10), row(account, 20, 'ben'), row(account, 30, 'ben')];
  // Same tick: one transaction carrying the stored row and the new ones.
  await Promise.all([usageLog.write(stored), ...fresh.map((r) => usageLog.write(r))]);
  expect(await storedRows(account)).toBe(4);
  expect(await spend(account, 'ben')).toEqual({ token: 1_060, requester: 50, total: 1_060 });
});

test('many rows at once, over the transaction size: each stored and counted once, per requester too', async () => {
  const account = 'acct-many';
  const rows = Array.from({ length: 57 }, (_, i) => row(account, 100 + i, i % 2 ? 'ana' : 'ben'));
  await Promise.all(rows.map((r) => usageLog.write(r)));
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
  expect(await storedRows(account)).toBe(1);
  const counter = await tables.clients.doc.send({
    operation: 'GetItem',
    input: { TableName: tables.tables.accounts, Key: { pk: `ACCOUNT#${account}#T#${account}_tok`, sk: 'BUDGET' } },
  });
  expect(counter.Item).toBeUndefined();
});

test('rows written together share transactions of up to 10 rows, each counter updated once per transaction', async () => {
  const account = 'acct-shared';
  const sent: Array<{ TransactItems: Array<Record<string, { Key?: Record<string, string> }>> }> = [];
  // The real client, with each transaction it sends noted.
  const noting = {
    send: ((command: StoreCommand) => {
      if (command.operation === 'TransactWriteItems') sent.push(command.input as (typeof sent)[number]);
      return tables.clients.doc.send(command as never);
    }) as typeof tables.clients.doc.send,
  };
  const log = new DynamoUsageLog(noting, tables.tables.usageLogs, {
    table: tables.tables.accounts,
    changes: spendChanges,
  });
  const rows = Array.from({ length: 25 }, (_, i) => row(account, 1_000 + i, 'ana'));
  await Promise.all(rows.map((r) => log.write(r)));
  expect(sent).toHaveLength(3);
  for (const transaction of sent) {
    const puts = transaction.TransactItems.filter((action) => action.Put);
    const updates = transaction.TransactItems.filter((action) => action.Update).map((action) =>
      JSON.stringify(action.Update.Key),
    );
    expect(puts.length).toBeLessThanOrEqual(10);
    // Token lifetime and month, requester lifetime and month: once each, whatever the number of rows.
    expect(updates).toHaveLength(4);
    expect(new Set(updates).size).toBe(4);
  }
  expect(await storedRows(account)).toBe(25);
  expect((await spend(account, 'ana')).token).toBe(rows.reduce((total, r) => total + r.cost_nanos, 0));
});
