/**
 * The stream consumer's role may write the accounts table only in the partitions its code declares
 * (`writesTo` in lambda/store/table-calls.ts, granted as `dynamodb:LeadingKeys` patterns: see
 * test/infra/least-privilege.test.ts). Here every write the consumer's alert store and spend fold
 * send, seen on the wire by a forwarder in front of DynamoDB Local, names a partition those patterns
 * match, so the condition cannot refuse an alert or a spend in AWS, and the declaration is no wider
 * than the writes.
 */
import { randomBytes } from 'node:crypto';
import { alertPayload, type BudgetAlert } from '../../../lambda/alerts/alert';
import { webhookSecrets } from '../../../lambda/wiring/deps';
import { EnvelopeSealer } from '../../../lambda/keys/crypto/envelope';
import { LocalKeyWrapper } from '../../../lambda/keys/crypto/local-key-wrapper';
import { DynamoAlertStore } from '../../../lambda/alerts/dynamodb/alert-store';
import { DynamoSpendFold } from '../../../lambda/budgets/dynamodb/spend-fold';
import type { UsageRow } from '../../../lambda/usage/usage-row';
import { createDynamoClients } from '../../../lambda/store/dynamodb/client';
import { CONSUMER_TABLE_CALLS } from '../../../lambda/store/table-calls';
import { startStoreCallCounter, type StoreCallCounter } from '../../support/store-call-counter';
import { createTestTables } from '../../support/tables';

let created: Awaited<ReturnType<typeof createTestTables>>;
let counter: StoreCallCounter;
beforeAll(async () => {
  created = await createTestTables();
  counter = await startStoreCallCounter(process.env.DYNAMODB_ENDPOINT!);
});
afterAll(async () => {
  await counter?.close();
  created?.clients.raw.destroy();
});

/** IAM's StringLike: `*` any characters, `?` one. */
const likePattern = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

/** The partition keys a write call names, in a transaction or alone. */
function writtenPartitions(body: Record<string, unknown>): string[] {
  type Op = { Item?: { pk?: { S?: string } }; Key?: { pk?: { S?: string } } };
  const ops: Op[] = Array.isArray(body.TransactItems)
    ? (body.TransactItems as Record<string, Op>[]).flatMap((item) => Object.values(item))
    : [body as Op];
  return ops.map((op) => String((op.Item ?? op.Key)?.pk?.S));
}

test("every write of the consumer's alert store lands in a partition its declared patterns match", async () => {
  const declared = CONSUMER_TABLE_CALLS.filter((c) => c.code === 'DynamoAlertStore' && c.table === 'accounts');
  const patterns = declared.flatMap((c) => c.writesTo ?? []).map(likePattern);
  expect(patterns.length).toBeGreaterThan(0);

  const clients = createDynamoClients({ region: 'eu-west-1', endpoint: counter.endpoint });
  const doc = clients.doc;
  const store = new DynamoAlertStore(
    doc,
    created.tables.accounts,
    webhookSecrets(new EnvelopeSealer(new LocalKeyWrapper(randomBytes(32)))),
  );
  const from = counter.calls.length;
  for (const [accountId, subject] of [
    ['acc-partitions', { kind: 'token', tokenId: 'tok-1' }],
    ['acc-with#hash', { kind: 'tag', key: 'team', value: 'search' }],
  ] as const) {
    const alert: BudgetAlert = {
      accountId,
      subject,
      threshold: 0.8,
      spentNanos: 8e9,
      limitNanos: 1e10,
      period: 'month',
      periodStart: Date.parse('2026-11-01T00:00:00Z'),
    };
    const sentAt = new Date().toISOString();
    expect(await store.claim(alert, `alert-${accountId}`, sentAt, alertPayload(alert, `alert-${accountId}`))).toEqual({
      id: `alert-${accountId}`,
      sentAt,
      queued: false,
    });
    await store.markQueued(alert);
    await store.recordDeliveries(accountId, `alert-${accountId}`, sentAt, [], 'delivered');
    await store.webhook(accountId);
  }

  const writes = counter.calls
    .slice(from)
    .filter((c) => ['TransactWriteItems', 'PutItem', 'UpdateItem'].includes(c.operation));
  expect(writes.map((c) => c.operation)).toEqual([
    'TransactWriteItems',
    'UpdateItem',
    'TransactWriteItems',
    'UpdateItem',
  ]);
  const partitions = writes.flatMap((c) => writtenPartitions(c.body));
  expect(partitions).toHaveLength(6);
  for (const pk of partitions) expect(patterns.some((p) => p.test(pk))).toBe(true);
  // The account's own partition (tokens, keys, budgets) is never one of them.
  for (const pattern of patterns) expect(pattern.test('ACCOUNT#acc-partitions')).toBe(false);
  clients.raw.destroy();
});

test("every write of the consumer's spend fold lands in its subjects' partitions, never the account's own", async () => {
  const declared = CONSUMER_TABLE_CALLS.filter((c) => c.table === 'accounts' && c.code !== 'DynamoAlertStore');
  const patterns = declared.flatMap((c) => c.writesTo ?? []).map(likePattern);
  expect(patterns.length).toBeGreaterThan(0);

  const clients = createDynamoClients({ region: 'eu-west-1', endpoint: counter.endpoint });
  const fold = new DynamoSpendFold(clients.doc, created.tables.accounts);
  const rows = ['acc-spend-partitions', 'acc-spend#hash'].map((accountId, i) => ({
    row: {
      account_id: accountId,
      id: `row-${i}`,
      ts: new Date().toISOString(),
      provider: 'prov-b',
      model: 'fam-4o-mini',
      cost_nanos: 1_000,
      priced: true,
      status_code: 200,
      token_id: 'tok-1',
      requester: 'alice',
      tags: { team: 'search' },
    } as unknown as UsageRow,
    lineage: 'shardId-0001',
    sequence: String(10n ** 20n + BigInt(i + 1)),
  }));
  const from = counter.calls.length;
  expect((await fold.fold(rows)).failed).toEqual([]);

  const writes = counter.calls
    .slice(from)
    .filter((c) => ['TransactWriteItems', 'PutItem', 'UpdateItem'].includes(c.operation));
  const partitions = writes.flatMap((c) => writtenPartitions(c.body));
  // A token, a requester and a tag for each of the two accounts.
  expect(new Set(partitions).size).toBe(6);
  for (const pk of partitions) expect(patterns.some((p) => p.test(pk))).toBe(true);
  for (const pattern of patterns) expect(pattern.test('ACCOUNT#acc-spend-partitions')).toBe(false);
  clients.raw.destroy();
});
