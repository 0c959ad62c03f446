import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecuteStatementCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import { ROW_SHARDS, rowPartitions } from '../../../lambda/usage/dynamodb/row-shards';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { sdkDocumentClient } from '../../reliability/support/dynamo';
import { createTestTables } from '../../support/tables';

/**
 * An account's rows are spread over shards (docs/deploy.md, "Reading the logs"; docs/usage-and-pricing.md,
 * "The usage row"); the logs API reads them as one log: newest first, paged by an opaque cursor, with
 * filters, rows written before shards existed included.
 */
let tables: Awaited<ReturnType<typeof createTestTables>>;
let usageLog: DynamoUsageLog;

beforeAll(async () => {
  tables = await createTestTables();
  usageLog = new DynamoUsageLog(tables.clients.doc, tables.tables.usageLogs);
});
afterAll(() => tables.clients.raw.destroy());

const year = new Date().getUTCFullYear() + 1;
const at = Date.parse(`${year}-03-10T12:00:00.000Z`);

function row(accountId: string, index: number): UsageRow {
  const ts = new Date(at + index * 1000).toISOString();
  return {
    ...{
      account_id: accountId,
      id: `r${String(index).padStart(4, '0')}`,
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
      cost_nanos: 0,
      cost_usd: 0,
      priced: true,
      latency_ms: 5,
      status_code: 200,
      cached: false,
      saved_usd: 0,
      saved_nanos: 0,
    },
    ...{ stream: false, mode: 'stored', token_id: `${accountId}_tok`, requester: index % 3 === 0 ? 'ana' : 'bo' },
  };
}

async function allPages(accountId: string, query: Record<string, unknown>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await usageLog.query(accountId, { limit, ...query, cursor });
    ids.push(...result.items.map((item) => item.id));
    if (!result.nextCursor) return ids;
    cursor = result.nextCursor;
  }
  throw new Error('the cursor never ended');
}

test('rows of every shard and of the partition before shards come back as one log, newest first, page by page', async () => {
  const account = 'acctshards';
  const rows = Array.from({ length: 60 }, (_, index) => row(account, index));
  // The first ten as an earlier version stored them: in the partition named by the bare account id.
  for (const old of rows.slice(0, 10)) {
    await tables.clients.doc.send({
      operation: 'PutItem',
      input: { TableName: tables.tables.usageLogs, Item: { ...old, ts_id: `${old.ts}#${old.id}` } },
    });
  }
  for (const fresh of rows.slice(10)) await usageLog.write(fresh);
  const newestFirst = rows.map((r) => r.id).reverse();

  // Spread over the shards: each holds some, none holds them all.
  const counts = await Promise.all(
    rowPartitions(account).map(async (partition) => {
      const { Count } = await tables.clients.doc.send({
        operation: 'Query',
        input: {
          TableName: tables.tables.usageLogs,
          KeyConditionExpression: 'account_id = :a',
          ExpressionAttributeValues: { ':a': partition },
          Select: 'COUNT',
        },
      });
      return Count ?? 0;
    }),
  );
  expect(counts.slice(0, ROW_SHARDS).filter((count) => count > 0).length).toBeGreaterThan(ROW_SHARDS / 2);
  expect(counts[ROW_SHARDS]).toBe(10);

  for (const limit of [1, 7, 60, 100]) expect(await allPages(account, {}, limit)).toEqual(newestFirst);
  const ana = rows
    .filter((r) => r.requester === 'ana')
    .map((r) => r.id)
    .reverse();
  expect(await allPages(account, { requester: 'ana' }, 4)).toEqual(ana);
  const from = rows[15]!.ts;
  const to = rows[44]!.ts;
  expect(await allPages(account, { from, to }, 6)).toEqual(newestFirst.filter((id) => id >= 'r0015' && id <= 'r0044'));
});

/** The PartiQL statement of docs/deploy.md, "Reading the logs", as a reader copies it into the console. */
function documentedConsoleQuery(): string {
  const doc = readFileSync(join(__dirname, '../../../docs/deploy.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Reading the logs'));
  const block = /```sql\n([\s\S]*?)\n\s*```/.exec(section)?.[1];
  if (!block) throw new Error('docs/deploy.md, "Reading the logs", has no sql block');
  return block
    .split('\n')
    .map((line) => line.trim())
    .join('\n');
}

test("docs/deploy.md's console query, as written there, lists one account's rows for the two days it names, every shard and the rows from before shards", async () => {
  const account = 'acctconsole';
  const day = (n: number) => new Date(Date.UTC(year, 2, 10 + n)).toISOString().slice(0, 10);
  // Four rows a day over five days, in the shards; one row a day in the partition from before shards.
  const rows = Array.from({ length: 20 }, (_, index) => ({
    ...row(account, index),
    ts: new Date(Date.parse(`${day(0)}T03:00:00.000Z`) + index * 6 * 3_600_000).toISOString(),
  }));
  for (const r of rows) await usageLog.write(r);
  const old = Array.from({ length: 5 }, (_, n) => ({ ...row(account, 100 + n), ts: `${day(n)}T23:59:59.000Z` }));
  for (const r of old) {
    await tables.clients.doc.send({
      operation: 'PutItem',
      input: { TableName: tables.tables.usageLogs, Item: { ...r, ts_id: `${r.ts}#${r.id}` } },
    });
  }

  // Only the documented placeholders change: the table's name, the account id and the two days.
  const documented = documentedConsoleQuery();
  const statement = documented
    .replace('"<stage>-ai-usage-proxy-usage-logs"', `"${tables.tables.usageLogs}"`)
    .replaceAll('acme1234', account)
    .replace("'2026-05-01'", `'${day(1)}'`)
    .replace("'2026-05-02~'", `'${day(2)}~'`);
  expect(statement).not.toBe(documented);
  expect(statement.match(new RegExp(`'${account}(#\\d)?'`, 'g'))).toEqual(rowPartitions(account).map((p) => `'${p}'`));

  const listed: string[] = [];
  let next: string | undefined;
  do {
    const page = await sdkDocumentClient().send(new ExecuteStatementCommand({ Statement: statement, NextToken: next }));
    listed.push(...(page.Items ?? []).map((item) => item.id as string));
    next = page.NextToken;
  } while (next);
  const inDays = [...rows, ...old].filter((r) => r.ts.slice(0, 10) === day(1) || r.ts.slice(0, 10) === day(2));
  expect(inDays).toHaveLength(10);
  expect(listed.sort()).toEqual(inDays.map((r) => r.id).sort());
});
