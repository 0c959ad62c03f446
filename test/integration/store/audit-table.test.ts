/**
 * The audit log's table on DynamoDB Local (docs/people.md, "The audit log"): an entry is only ever
 * added, a put that would land on an existing entry's key fails instead of replacing it, and an
 * account reads its own entries alone, newest first.
 */
import { DynamoAuditLog } from '../../../lambda/audit/dynamodb/audit-table';
import type { AuditEntry } from '../../../lambda/audit/ports';
import { createTestTables } from '../../support/tables';

let created: Awaited<ReturnType<typeof createTestTables>>;
beforeAll(async () => {
  created = await createTestTables();
});
afterAll(() => created?.clients.raw.destroy());

const entry = (accountId: string, at: string, id: string, target: string): AuditEntry => ({
  accountId,
  id,
  at,
  actor: 'token:acc_tok',
  action: 'price.set',
  target,
  before: null,
  after: { model: target, input: 1, output: 2, cache_read: undefined },
});

test('an entry is never replaced: a second put on its key fails and the first stays as it was', async () => {
  const log = new DynamoAuditLog(created.clients.doc, created.tables.audit);
  const first = entry('acc-append', '2026-11-29T08:00:00.000Z', '0123456789abcdef', 'model-a');
  await log.append(first);
  await expect(log.append({ ...first, target: 'rewritten' })).rejects.toMatchObject({
    name: 'ConditionalCheckFailedException',
  });
  const { items } = await log.list('acc-append', { limit: 10 });
  expect(items).toEqual([{ ...first, after: { model: 'model-a', input: 1, output: 2 } }]);
});

test("lists an account's own entries newest first, a page at a time", async () => {
  const log = new DynamoAuditLog(created.clients.doc, created.tables.audit);
  for (let i = 0; i < 5; i++)
    await log.append(entry('acc-pages', `2026-11-29T08:0${i}:00.000Z`, `${i}`.padStart(16, 'a'), `model-${i}`));
  await log.append(entry('acc-elsewhere', '2026-11-29T09:00:00.000Z', 'ffffffffffffffff', 'not-yours'));
  const first = await log.list('acc-pages', { limit: 3 });
  const second = await log.list('acc-pages', { limit: 3, cursor: first.nextCursor! });
  expect([...first.items, ...second.items].map((e) => e.target)).toEqual([
    'model-4',
    'model-3',
    'model-2',
    'model-1',
    'model-0',
  ]);
  expect(second.nextCursor).toBeNull();
});
