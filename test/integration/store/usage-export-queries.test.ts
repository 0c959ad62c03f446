/**
 * The usage export as it runs in AWS, and the Athena named queries over what it writes
 * (docs/alerts.md, "Usage in Athena"): rows written to DynamoDB Local reach the built consumer
 * bundle through the table's stream; its S3 client writes to a stand-in on 127.0.0.1 that keeps
 * each object on disk; DuckDB then runs the named queries' own text over those files, and each sum
 * equals the rows'. Delivered again or bisected, a batch leaves each row in exactly one object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { USAGE_COLUMNS, type ColumnType } from '../../../lambda/export/columns';
import { DynamoUsageLog } from '../../../lambda/usage/dynamodb/usage-log';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { querySql, TAG_PAIRS, USAGE_QUERIES, USAGE_TABLE } from '../../../lib/usage-queries';
import { startFakeS3, type FakeS3 } from '../../fakes/fake-s3';
import { createTestTables } from '../../support/tables';
import {
  exportedObjects,
  exportEnv,
  refusedThenRedelivered,
  streamEvent,
  type ConsumerEvent,
} from './support/consumer-bundle';

const BUCKET = 'usage-export-test';
const DUCKDB_TYPES: Record<ColumnType, string> = {
  string: 'VARCHAR',
  bigint: 'BIGINT',
  int: 'INTEGER',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  'map<string,string>': 'MAP(VARCHAR, VARCHAR)',
  'map<string,bigint>': 'MAP(VARCHAR, BIGINT)',
};

/** Rows of two accounts over three days in two months, with and without tags and requesters. */
const DAYS = ['2026-10-31T23:58:00Z', '2026-11-01T00:02:00Z', '2026-11-22T08:30:00Z'];
function row(i: number): UsageRow {
  const cost = 12_345 * (i + 1);
  return {
    account_id: i % 4 === 3 ? 'acc-export-b' : 'acc-export-a',
    id: `req-export-${i}`,
    ts: new Date(Date.parse(DAYS[i % 3]!) + i * 1000).toISOString(),
    provider: i % 2 ? 'prov-a' : 'prov-c',
    kind: 'chat',
    model: i % 2 ? 'fam-haiku-4-5-20251001' : 'fam-2.5-flash',
    input_tokens: 100 + i,
    output_tokens: 7 * i,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_nanos: cost,
    cost_usd: cost / 1e9,
    priced: true,
    latency_ms: 250,
    ...(i % 3 ? { requester: `user-${i % 2}` } : {}),
    ...(i % 5 ? { tags: { team: i % 2 ? 'search' : 'ads', ...(i % 4 ? {} : { env: 'prod' }) } } : {}),
    status_code: 200,
    cached: false,
    saved_nanos: 0,
    saved_usd: 0,
    stream: false,
    mode: 'stored',
    token_id: 'tok-export',
  };
}
const rows = Array.from({ length: 24 }, (_, i) => row(i));

let created: Awaited<ReturnType<typeof createTestTables>>;
let s3: FakeS3;
let root: string;
let event: ConsumerEvent;
let duck: DuckDBConnection;

const consumerEnv = () => exportEnv(created.prefix, BUCKET, s3);
/** Every exported object's rows, by key. */
const exported = () => exportedObjects(root, BUCKET, 'usage');

beforeAll(async () => {
  created = await createTestTables();
  root = mkdtempSync(join(tmpdir(), 'usage-export-'));
  s3 = await startFakeS3(root);
  const log = new DynamoUsageLog(created.clients.doc, created.tables.usageLogs);
  for (const r of rows) await log.write(r);
  event = await streamEvent(created.clients.raw, created.tables.usageLogs);
});
afterAll(async () => {
  duck?.closeSync();
  await s3?.close();
  created?.clients.raw.destroy();
  if (root) rmSync(root, { recursive: true, force: true });
});

test('a batch S3 refuses is reported from its first row and exported whole when delivered again', async () => {
  const { refused, putsWhenRefused, again } = await refusedThenRedelivered(event, consumerEnv(), s3);
  expect(refused.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]!.dynamodb!.SequenceNumber }]);
  expect(putsWhenRefused).toBe(0);
  expect(again.map((answer) => answer.batchItemFailures)).toEqual([[], [], [], []]);
});

test('each row is in exactly one object, under its UTC day, with its columns and nothing of the stored item', () => {
  const objects = exported();
  const ids = [...objects.values()].flat().map((record) => record.id);
  expect(ids.sort()).toEqual(rows.map((r) => r.id).sort());
  for (const [key, records] of objects) {
    expect(key).toMatch(/^usage\/dt=\d{4}-\d{2}-\d{2}\/[^/]+\.json\.gz$/);
    for (const record of records) {
      expect(key.startsWith(`usage/dt=${String(record.ts).slice(0, 10)}/`)).toBe(true);
      const original = rows.find((r) => r.id === record.id)!;
      expect(record).toEqual(JSON.parse(JSON.stringify(original)));
    }
  }
  expect(new Set(s3.puts.map((put) => put.contentType))).toEqual(new Set(['application/gzip']));
  for (const put of s3.puts)
    expect(put.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/eu-west-1\/s3\//);
});

describe('the named queries over the exported files, in DuckDB', () => {
  beforeAll(async () => {
    // Extensions are built in (JSON included); nothing may be fetched from the network.
    const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
    duck = await db.connect();
    const columns = USAGE_COLUMNS.map(({ name, type }) => `${name}: '${DUCKDB_TYPES[type]}'`).join(', ');
    const files = join(root, BUCKET, 'usage', '*', '*.json.gz');
    await duck.run(
      `CREATE VIEW ${USAGE_TABLE} AS SELECT * FROM read_json('${files}', format = 'newline_delimited', ` +
        `hive_partitioning = true, hive_types = {'dt': 'VARCHAR'}, columns = {${columns}})`,
    );
  });

  const run = async (name: string) => {
    const query = USAGE_QUERIES.find((q) => q.name === name)!;
    const reader = await duck.runAndReadAll(querySql(query, 'duckdb'));
    return reader.getRowObjectsJson() as Record<string, string | number | null>[];
  };
  /** The rows' own sums per group, as the queries name them. */
  const expected = (groups: (r: UsageRow) => (string | null)[][]) => {
    const sums = new Map<string, { spend_nanos: number; requests: number }>();
    for (const r of rows)
      for (const group of groups(r)) {
        const key = JSON.stringify([r.account_id, r.ts.slice(0, 7), ...group]);
        const sum = sums.get(key) ?? { spend_nanos: 0, requests: 0 };
        sums.set(key, { spend_nanos: sum.spend_nanos + r.cost_nanos, requests: sum.requests + 1 });
      }
    return Object.fromEntries(sums);
  };
  const actual = (result: Record<string, string | number | null>[], columns: string[]) =>
    Object.fromEntries(
      result.map((r) => [
        JSON.stringify(['account_id', 'month', ...columns].map((c) => r[c])),
        { spend_nanos: Number(r.spend_nanos), requests: Number(r.requests) },
      ]),
    );

  it('spend by month and tag equals the rows, each row once under each of its tags', async () => {
    const result = await run('spend-by-month-and-tag');
    expect(actual(result, ['tag_key', 'tag_value'])).toEqual(expected((r) => Object.entries(r.tags ?? {})));
    for (const r of result) expect(Number(r.spend_usd)).toBeCloseTo(Number(r.spend_nanos) / 1e9, 12);
  });

  it('spend by month and model equals the rows', async () => {
    const result = await run('spend-by-month-and-model');
    expect(actual(result, ['provider', 'model'])).toEqual(expected((r) => [[r.provider, r.model]]));
  });

  it('spend by month and requester equals the rows, those without one under NULL', async () => {
    const result = await run('spend-by-month-and-requester');
    expect(actual(result, ['requester'])).toEqual(expected((r) => [[r.requester ?? null]]));
    expect(new Set(result.map((r) => r.month))).toEqual(new Set(['2026-10', '2026-11']));
  });

  it("the Athena text differs from DuckDB's only in the tag expansion", () => {
    for (const query of USAGE_QUERIES) {
      const athena = querySql(query, 'athena');
      if (query.sql.includes('{{tag_pairs}}')) expect(athena).toContain(TAG_PAIRS.athena);
      expect(athena.replaceAll(TAG_PAIRS.athena, TAG_PAIRS.duckdb)).toEqual(querySql(query, 'duckdb'));
      expect(athena).not.toContain('{{');
    }
  });
});
