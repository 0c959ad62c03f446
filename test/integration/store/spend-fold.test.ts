/**
 * The budgets' spend is folded from the usage-logs stream, and a stream delivers at least once: a
 * batch comes again after a timeout, split in halves after an error, extended with newer rows, or
 * read by a second consumer. Every test here redelivers rows and checks that each subject's spend
 * (token, requester, tag; lifetime, month, day) still equals the sum of its rows' cost.
 */
import { randomBytes } from 'node:crypto';
import { DynamoBudgetStore } from '../../../lambda/budgets/dynamodb/budget-store';
import { DynamoSpendFold } from '../../../lambda/budgets/dynamodb/spend-fold';
import type { BudgetSubject } from '../../../lambda/budgets/budget';
import type { BudgetPeriod } from '../../../lambda/budgets/periods';
import type { StreamedRow } from '../../../lambda/usage/rollups/fold';
import type { DocumentClient } from '../../../lambda/store/dynamodb/document-client';
import type { StoreCommand } from '../../../lambda/store/dynamodb/commands';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { createTestTables } from '../../support/tables';

const AT = Date.parse('2026-11-20T10:00:00Z');
let doc: DocumentClient;
let table: string;
let budgets: DynamoBudgetStore;
let destroy: () => void;

beforeAll(async () => {
  const { clients, tables } = await createTestTables();
  doc = clients.doc;
  table = tables.accounts;
  budgets = new DynamoBudgetStore(doc, tables.accounts, tables.rateLimits);
  destroy = () => clients.raw.destroy();
});
afterAll(() => destroy());

const account = () => `acc-${randomBytes(4).toString('hex')}`;

/** Priced rows of one token, every third without a requester, all tagged, each with its stream position on `lineage`. */
function streamRows(accountId: string, count: number, lineage = 'shardId-0001', firstPosition = 1): StreamedRow[] {
  return Array.from({ length: count }, (_, i) => {
    const row = {
      account_id: accountId,
      id: `r-${lineage}-${i}`,
      ts: new Date(AT + i * 1_000).toISOString(),
      provider: 'prov-b',
      model: 'fam-4o-mini',
      input_tokens: 10,
      output_tokens: 3,
      cost_nanos: 1_000 + i,
      priced: true,
      status_code: 200,
      token_id: 'tok',
      tags: { team: 'search' },
      ...(i % 3 === 0 ? {} : { requester: 'alice' }),
    } as unknown as UsageRow;
    // Real sequence numbers are 21+ digit strings; the width varies, which the fold must order numerically.
    return { row, lineage, sequence: String(10n ** 20n + BigInt(firstPosition + i * 7)) };
  });
}

const TOKEN: BudgetSubject = { kind: 'token', tokenId: 'tok' };
const ALICE: BudgetSubject = { kind: 'requester', requester: 'alice' };
const TEAM: BudgetSubject = { kind: 'tag', key: 'team', value: 'search' };

async function spent(accountId: string, subject: BudgetSubject, period: BudgetPeriod = 'month'): Promise<number> {
  await budgets.setBudget(accountId, subject, { limitNanos: 10 ** 15, period }, 'x');
  return (await budgets.statusOf(accountId, subject, AT))!.spentNanos;
}

async function spendOf(accountId: string) {
  return {
    token: await spent(accountId, TOKEN),
    alice: await spent(accountId, ALICE),
    team: await spent(accountId, TEAM),
  };
}

function expected(rows: StreamedRow[]) {
  const sum = (list: StreamedRow[]) => list.reduce((total, { row }) => total + row.cost_nanos, 0);
  return { token: sum(rows), alice: sum(rows.filter(({ row }) => row.requester === 'alice')), team: sum(rows) };
}

/** The real client, with a fault injected into chosen writes (the store itself is real). */
function faulty(inject: (send: () => Promise<unknown>, key: string) => Promise<unknown> | undefined) {
  const state = { writes: 0 };
  const wrapped = {
    send: (async (command: StoreCommand) => {
      if (command.operation === 'UpdateItem') {
        state.writes++;
        const injected = inject(() => doc.send(command), JSON.stringify(command.input.Key));
        if (injected) return injected;
      }
      return doc.send(command as never);
    }) as DocumentClient['send'],
  };
  return { doc: wrapped, state };
}

describe('folding the usage stream into the budgets’ spend', () => {
  it('costs one write per subject per batch, whatever the number of rows, and counts every period', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 60);
    const counting = faulty(() => undefined);
    expect((await new DynamoSpendFold(counting.doc, table, () => AT).fold(rows)).failed).toEqual([]);
    // Token, requester, tag: one write each.
    expect(counting.state.writes).toBe(3);
    expect(await spendOf(accountId)).toEqual(expected(rows));
    expect(await spent(accountId, TOKEN, 'day')).toBe(expected(rows).token);
    expect(await spent(accountId, TOKEN, 'total')).toBe(expected(rows).token);
  });

  it('does not count a batch delivered again, in halves, or overlapping newer rows', async () => {
    const accountId = account();
    const fold = new DynamoSpendFold(doc, table, () => AT);
    const rows = streamRows(accountId, 50);
    await fold.fold(rows.slice(0, 30));
    expect((await fold.fold(rows.slice(0, 30))).failed).toEqual([]);
    await fold.fold(rows.slice(0, 15));
    await fold.fold(rows.slice(15, 30));
    await fold.fold(rows.slice(10, 50));
    await fold.fold([...rows].reverse());
    expect(await spendOf(accountId)).toEqual(expected(rows));
  });

  it('reports the rows of a failed write; delivered again from the earliest, every row is counted once', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 30);
    let failures = 0;
    const flaky = faulty((_send, key) => {
      if (key.includes('#R#') && failures++ === 0)
        return Promise.reject(Object.assign(new Error('throttled'), { name: 'InternalServerError' }));
      return undefined;
    });
    const { failed } = await new DynamoSpendFold(flaky.doc, table, () => AT).fold(rows);
    expect(failed.length).toBeGreaterThan(0);
    const earliest = rows.findIndex((streamed) => failed.includes(streamed));
    expect((await new DynamoSpendFold(doc, table, () => AT).fold(rows.slice(earliest))).failed).toEqual([]);
    expect(await spendOf(accountId)).toEqual(expected(rows));
  });

  it('does not count twice when a write landed but its answer was lost and the batch comes again', async () => {
    const accountId = account();
    const rows = streamRows(accountId, 20);
    const losing = faulty((send) =>
      send().then(() => Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))),
    );
    expect((await new DynamoSpendFold(losing.doc, table, () => AT).fold(rows)).failed).toHaveLength(20);
    expect((await new DynamoSpendFold(doc, table, () => AT).fold(rows)).failed).toEqual([]);
    expect(await spendOf(accountId)).toEqual(expected(rows));
  });

  it('stays exact with two consumers reading the same shards at the same time, each in its own batches', async () => {
    const accountId = account();
    const shardA = streamRows(accountId, 60, 'shardId-A', 1000);
    const shardB = streamRows(accountId, 40, 'shardId-B', 1);
    const consume = async (rows: StreamedRow[], cuts: number[]) => {
      const fold = new DynamoSpendFold(doc, table, () => AT);
      for (let i = 0; i + 1 < cuts.length; i++) {
        const batch = rows.slice(cuts[i], cuts[i + 1]);
        // A write that lost every round to the other consumer is reported; the batch is read again before moving on.
        while ((await fold.fold(batch)).failed.length) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all([
      consume(shardA, [0, 25, 60]),
      consume(shardA, [0, 10, 45, 60]),
      consume(shardB, [0, 40]),
      consume(shardB, [0, 5, 20, 40]),
    ]);
    expect(await spendOf(accountId)).toEqual(expected([...shardA, ...shardB]));
  });

  it('keeps each subject item under 1 KB: old days, months and shard watermarks are removed once no row can add to them', async () => {
    const accountId = account();
    const day = 86_400_000;
    // Thirty days of one batch a day, each from a shard of its own (as streams roll their shards over).
    for (let d = 0; d < 30; d++) {
      const at = AT + d * day;
      const rows = streamRows(accountId, 3, `shardId-day-${d}`).map((streamed) => ({
        ...streamed,
        row: { ...streamed.row, ts: new Date(at).toISOString() },
      }));
      expect((await new DynamoSpendFold(doc, table, () => at).fold(rows)).failed).toEqual([]);
    }
    const item = (
      await doc.send({
        operation: 'GetItem',
        input: { TableName: table, Key: { pk: `ACCOUNT#${accountId}#T#tok`, sk: 'BUDGET' }, ConsistentRead: true },
      })
    ).Item!;
    const names = Object.keys(item);
    expect(names.filter((name) => name.startsWith('w#')).length).toBeLessThanOrEqual(2);
    expect(names.filter((name) => name.startsWith('d#')).length).toBeLessThanOrEqual(3);
    expect(names.filter((name) => name.startsWith('m#')).length).toBeLessThanOrEqual(2);
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(1024);
    // The lifetime spend keeps everything.
    expect(item.spent_total_nanos).toBe(30 * (1_000 + 1_001 + 1_002));
  });
});
