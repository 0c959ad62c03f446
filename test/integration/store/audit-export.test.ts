/**
 * The audit log in the export bucket, beside the usage rows (docs/people.md, "The audit log"):
 * entries appended to DynamoDB Local reach the built consumer bundle through the audit table's
 * stream; its S3 client writes to a stand-in on 127.0.0.1; DuckDB reads the objects with the Glue
 * table's columns. Delivered again or split, a batch leaves each entry in exactly one object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DynamoAuditLog } from '../../../lambda/audit/dynamodb/audit-table';
import type { AuditEntry } from '../../../lambda/audit/ports';
import { AUDIT_COLUMNS } from '../../../lambda/export/columns';
import { AUDIT_TABLE } from '../../../lib/usage-queries';
import { startFakeS3, type FakeS3 } from '../../fakes/fake-s3';
import { createTestTables } from '../../support/tables';
import {
  exportedObjects,
  exportEnv,
  refusedThenRedelivered,
  streamEvent,
  type ConsumerEvent,
} from './support/consumer-bundle';

const BUCKET = 'audit-export-test';

/** Entries of two accounts over two days, by the admin key, a token and a person, with and without settings. */
const entries: AuditEntry[] = Array.from({ length: 12 }, (_, i) => ({
  accountId: i % 3 === 2 ? 'acc-audit-b' : 'acc-audit-a',
  id: (0x1000 + i).toString(16).padStart(16, '0'),
  at: new Date(Date.parse(i % 2 ? '2026-11-21T23:59:00Z' : '2026-11-22T00:01:00Z') + i * 1000).toISOString(),
  actor: ['admin-key', 'token:tok-1', 'person:alice'][i % 3]!,
  ...(i % 3 === 2 ? { actorName: 'alice@example.test' } : {}),
  address: `192.0.2.${i}`,
  action: i % 2 ? 'budget.set' : 'key.saved',
  target: i % 2 ? `token:tok-${i}` : 'prov-a',
  ...(i % 4 ? { before: i % 2 ? { usd: i, period: 'day' } : '…1234' } : {}),
  after: i % 2 ? { usd: i + 1, period: 'day', alert_at: [0.5, 1] } : '…abcd',
}));

let created: Awaited<ReturnType<typeof createTestTables>>;
let s3: FakeS3;
let root: string;
let event: ConsumerEvent;

const consumerEnv = () => exportEnv(created.prefix, BUCKET, s3);
const exported = () => exportedObjects(root, BUCKET, 'audit');

beforeAll(async () => {
  created = await createTestTables();
  root = mkdtempSync(join(tmpdir(), 'audit-export-'));
  s3 = await startFakeS3(root);
  const log = new DynamoAuditLog(created.clients.doc, created.tables.audit);
  for (const entry of entries) await log.append(entry);
  event = await streamEvent(created.clients.raw, created.tables.audit);
});
afterAll(async () => {
  await s3?.close();
  created?.clients.raw.destroy();
  if (root) rmSync(root, { recursive: true, force: true });
});

test('a batch S3 refuses is reported from its first entry and exported whole when delivered again', async () => {
  const { refused, putsWhenRefused, again } = await refusedThenRedelivered(event, consumerEnv(), s3);
  expect(refused.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]!.dynamodb!.SequenceNumber }]);
  expect(putsWhenRefused).toBe(0);
  expect(again.map((answer) => answer.batchItemFailures)).toEqual([[], [], [], []]);
  // The audit stream is exported, not folded: no rollup, no usage object.
  expect(s3.puts.every((put) => put.key.startsWith('audit/'))).toBe(true);
});

test('each entry is in exactly one object, under the UTC day it was made, as the audit API names it, settings as JSON text', () => {
  const objects = exported();
  const records = [...objects.values()].flat();
  expect(records.map((record) => record.id).sort()).toEqual(entries.map((entry) => entry.id).sort());
  for (const [key, inObject] of objects) {
    expect(key).toMatch(/^audit\/dt=\d{4}-\d{2}-\d{2}\/[^/]+\.json\.gz$/);
    for (const record of inObject) {
      expect(key.startsWith(`audit/dt=${String(record.at).slice(0, 10)}/`)).toBe(true);
      const entry = entries.find((e) => e.id === record.id)!;
      expect(record).toEqual({
        account_id: entry.accountId,
        id: entry.id,
        at: entry.at,
        actor: entry.actor,
        ...(entry.actorName ? { actor_name: entry.actorName } : {}),
        address: entry.address,
        action: entry.action,
        target: entry.target,
        ...(entry.before === undefined ? {} : { before: JSON.stringify(entry.before) }),
        after: JSON.stringify(entry.after),
      });
    }
  }
  expect(new Set(objects.keys()).size).toBeGreaterThanOrEqual(2);
});

test("the Glue table's columns read every entry in DuckDB, each account's own", async () => {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const duck = await db.connect();
  try {
    const columns = AUDIT_COLUMNS.map(({ name }) => `"${name}": 'VARCHAR'`).join(', ');
    const files = join(root, BUCKET, 'audit', '*', '*.json.gz');
    await duck.run(
      `CREATE VIEW ${AUDIT_TABLE} AS SELECT * FROM read_json('${files}', format = 'newline_delimited', ` +
        `hive_partitioning = true, hive_types = {'dt': 'VARCHAR'}, columns = {${columns}})`,
    );
    const reader = await duck.runAndReadAll(
      `SELECT account_id, action, count(*) AS n, max(CAST(json_extract_string(after, '$.usd') AS DOUBLE)) AS top FROM ${AUDIT_TABLE} ` +
        `GROUP BY account_id, action ORDER BY account_id, action`,
    );
    const expected = new Map<string, { n: number; top: number | null }>();
    for (const entry of entries) {
      const key = `${entry.accountId} ${entry.action}`;
      const usd =
        typeof entry.after === 'object' && entry.after && 'usd' in entry.after ? Number(entry.after.usd) : null;
      const seen = expected.get(key);
      expected.set(key, {
        n: (seen?.n ?? 0) + 1,
        top: usd === null ? (seen?.top ?? null) : Math.max(usd, seen?.top ?? usd),
      });
    }
    const rows = reader.getRowObjectsJson() as Record<string, string | number | null>[];
    expect(
      new Map(
        rows.map((r) => [
          `${r.account_id} ${r.action}`,
          { n: Number(r.n), top: r.top === null ? null : Number(r.top) },
        ]),
      ),
    ).toEqual(expected);
  } finally {
    duck.closeSync();
  }
});
