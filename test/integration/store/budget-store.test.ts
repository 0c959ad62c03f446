import { exceededMessage, isExhausted, type BudgetStatus, type BudgetSubject } from '../../../lambda/budgets/budget';
import { DynamoBudgetStore } from '../../../lambda/budgets/dynamodb/budget-store';
import { DynamoSpendFold } from '../../../lambda/budgets/dynamodb/spend-fold';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { createTestTables } from '../../support/tables';

/**
 * Period rollover, with the clock in the test's hands: spend recorded at one
 * time is read back at others, on DynamoDB Local through the real adapter.
 * The dates are in the future, so the fold's pruning (it keeps recent days
 * and months) leaves them alone while the test runs.
 */
const year = new Date().getUTCFullYear() + 2;
const at = (iso: string) => Date.parse(`${year}-${iso}Z`);

let store: DynamoBudgetStore;
let spendFold: DynamoSpendFold;
let tables: Awaited<ReturnType<typeof createTestTables>>;
beforeAll(async () => {
  tables = await createTestTables();
  store = new DynamoBudgetStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
  spendFold = new DynamoSpendFold(tables.clients.doc, tables.tables.accounts);
});

/** Spend is added by the fold of the row's stream record, as the stream consumer does; one shard, in order. */
let position = 0;
const recordRow = async (row: UsageRow) => {
  const { failed } = await spendFold.fold([
    { row, lineage: 'shardId-test', sequence: String(10n ** 20n + BigInt(++position)) },
  ]);
  if (failed.length) throw new Error('spend not folded');
};

let rowCount = 0;
function row(accountId: string, time: number, costNanos: number, extra: Partial<UsageRow> = {}): UsageRow {
  return {
    ...{
      account_id: accountId,
      id: `row-${rowCount++}`,
      ts: new Date(time).toISOString(),
      provider: 'prov-b',
      kind: 'chat',
      model: 'm',
    },
    ...{
      input_tokens: 10,
      output_tokens: 5,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: costNanos / 1e9,
      cost_nanos: costNanos,
      priced: true,
    },
    ...{
      latency_ms: 5,
      status_code: 200,
      cached: false,
      saved_usd: 0,
      saved_nanos: 0,
      stream: false,
      mode: 'stored',
      token_id: `${accountId}_tok`,
    },
    ...extra,
  };
}

async function spentAt(accountId: string, time: number, requester?: string): Promise<BudgetStatus[]> {
  const subjects: BudgetSubject[] = [
    { kind: 'token', tokenId: `${accountId}_tok` },
    ...(requester ? [{ kind: 'requester' as const, requester }] : []),
  ];
  const statuses = await Promise.all(subjects.map((subject) => store.statusOf(accountId, subject, time)));
  return statuses.filter((status): status is BudgetStatus => status !== undefined);
}

describe('budget periods roll over in UTC', () => {
  it('a day budget resets at 00:00 UTC, a month budget on the 1st, a total budget never', async () => {
    const day = 'acctday';
    const month = 'acctmonth';
    const total = 'accttotal';
    const limit = { limitNanos: 1_000, period: 'day' as const };
    await store.setBudget(day, { kind: 'token', tokenId: `${day}_tok` }, limit, 'x');
    await store.setBudget(month, { kind: 'token', tokenId: `${month}_tok` }, { ...limit, period: 'month' }, 'x');
    await store.setBudget(total, { kind: 'token', tokenId: `${total}_tok` }, { ...limit, period: 'total' }, 'x');
    for (const account of [day, month, total]) {
      await recordRow(row(account, at('01-31T23:59:59.999'), 1_000));
    }

    const lastMs = at('01-31T23:59:59.999');
    const nextDay = at('02-01T00:00:00.000');
    const laterInMonth = at('02-27T12:00:00.000');
    const nextMonth = at('03-01T00:00:00.000');

    const [dayNow] = await spentAt(day, lastMs);
    expect(dayNow).toMatchObject({ spentNanos: 1_000, resetsAt: nextDay });
    expect(isExhausted(dayNow)).toBe(true);
    expect(exceededMessage(dayNow)).toContain(`It resets at ${new Date(nextDay).toISOString()}`);
    expect((await spentAt(day, nextDay))[0]).toMatchObject({ spentNanos: 0, resetsAt: at('02-02T00:00:00.000') });

    const [monthNow] = await spentAt(month, lastMs);
    expect(monthNow).toMatchObject({ spentNanos: 1_000, resetsAt: nextDay });
    expect((await spentAt(month, nextDay))[0]).toMatchObject({ spentNanos: 0, resetsAt: nextMonth });

    // February: spend on two days; the month sums them, each day only sees its own.
    await recordRow(row(month, at('02-03T10:00:00.000'), 300));
    await recordRow(row(month, at('02-27T23:00:00.000'), 400));
    expect((await spentAt(month, laterInMonth))[0].spentNanos).toBe(700);
    expect((await spentAt(month, nextMonth))[0].spentNanos).toBe(0);

    for (const time of [lastMs, nextDay, nextMonth, at('12-31T23:59:59.000')]) {
      const [totalNow] = await spentAt(total, time);
      expect(totalNow).toMatchObject({ spentNanos: 1_000 });
      expect(totalNow.resetsAt).toBeUndefined();
      expect(isExhausted(totalNow)).toBe(true);
    }
  });

  it('a day inside a month: the day budget counts only that UTC day', async () => {
    const account = 'acctdays';
    await store.setBudget(
      account,
      { kind: 'token', tokenId: `${account}_tok` },
      { limitNanos: 500, period: 'day' },
      'x',
    );
    await recordRow(row(account, at('06-10T23:30:00.000'), 200));
    await recordRow(row(account, at('06-11T00:30:00.000'), 450));
    expect((await spentAt(account, at('06-10T23:59:00.000')))[0].spentNanos).toBe(200);
    const [eleventh] = await spentAt(account, at('06-11T08:00:00.000'));
    expect(eleventh.spentNanos).toBe(450);
    expect(isExhausted(eleventh)).toBe(false);
    await recordRow(row(account, at('06-11T09:00:00.000'), 50));
    expect(isExhausted((await spentAt(account, at('06-11T09:00:01.000')))[0])).toBe(true);
  });

  it('requester spend is per account and per label; cost 0 adds nothing; one item per subject holds its month and day', async () => {
    const first = 'acctreqa';
    const second = 'acctreqb';
    for (const account of [first, second])
      await store.setBudget(
        account,
        { kind: 'requester', requester: 'ana' },
        { limitNanos: 10_000, period: 'month' },
        'x',
      );
    await recordRow(row(first, at('04-15T12:00:00.000'), 2_500, { requester: 'ana' }));
    await recordRow(row(first, at('04-15T12:00:01.000'), 0, { requester: 'ana', status_code: 402 }));
    const statuses = await spentAt(first, at('04-20T00:00:00.000'), 'ana');
    expect(statuses.map((s) => s.subject.kind)).toEqual(['requester']);
    expect(statuses[0].spentNanos).toBe(2_500);
    expect((await spentAt(second, at('04-20T00:00:00.000'), 'ana'))[0].spentNanos).toBe(0);
    expect(await store.listBudgets(first, 'requester', at('04-20T00:00:00.000'))).toEqual([
      {
        subject: { kind: 'requester', requester: 'ana' },
        budget: { limitNanos: 10_000, period: 'month', alertAt: [0.8, 1] },
        spentNanos: 2_500,
        resetsAt: at('05-01T00:00:00.000'),
      },
    ]);

    // The token's counters live in its own partition, not the account's.
    const key = { pk: `ACCOUNT#${first}#T#${first}_tok`, sk: 'BUDGET' };
    const { Item: counters } = await tables.clients.doc.send({
      operation: 'GetItem',
      input: { TableName: tables.tables.accounts, Key: key },
    });
    expect(counters).toMatchObject({
      spent_total_nanos: 2_500,
      [`m#${year}-04`]: 2_500,
      [`d#${year}-04-15`]: 2_500,
    });
  });

  it('spend counted before a budget exists is seen once one is set; removing a budget keeps the spend', async () => {
    const account = 'acctlate';
    const tokenSubject = { kind: 'token' as const, tokenId: `${account}_tok` };
    await recordRow(row(account, at('07-01T01:00:00.000'), 700));
    expect(await spentAt(account, at('07-01T02:00:00.000'))).toEqual([]);
    await store.setBudget(account, tokenSubject, { limitNanos: 600, period: 'month' }, 'x');
    expect(isExhausted((await spentAt(account, at('07-01T02:00:00.000')))[0])).toBe(true);
    expect(await store.removeBudget(account, tokenSubject)).toBe(true);
    expect(await store.removeBudget(account, tokenSubject)).toBe(false);
    expect(await spentAt(account, at('07-01T02:00:00.000'))).toEqual([]);
    await store.setBudget(account, tokenSubject, { limitNanos: 800, period: 'total' }, 'x');
    expect((await spentAt(account, at('07-01T02:00:00.000')))[0].spentNanos).toBe(700);
  });
});
