/**
 * An account's webhook signing secret is stored sealed with the provider keys' envelope encryption
 * (docs/alerts.md, "Checking the signature"): the item in DynamoDB Local holds no trace of it, the
 * store opens it for its own account only, and a body signed with the opened secret verifies as a
 * receiver checks it.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { DynamoAlertStore } from '../../../lambda/alerts/dynamodb/alert-store';
import { webhookSecrets } from '../../../lambda/wiring/deps';
import { EnvelopeSealer } from '../../../lambda/keys/crypto/envelope';
import { LocalKeyWrapper } from '../../../lambda/keys/crypto/local-key-wrapper';
import { signature } from '../../../lambda/alerts/webhook-delivery';
import { createTestTables } from '../../support/tables';

let created: Awaited<ReturnType<typeof createTestTables>>;
beforeAll(async () => {
  created = await createTestTables();
});
afterAll(() => created?.clients.raw.destroy());

test('the stored webhook holds the secret sealed, not as text; it opens for its account alone and signs as before', async () => {
  const store = new DynamoAlertStore(
    created.clients.doc,
    created.tables.accounts,
    webhookSecrets(new EnvelopeSealer(new LocalKeyWrapper(randomBytes(32)))),
  );
  const secret = randomBytes(32).toString('base64url');
  await store.setWebhook('acc-sealed', {
    url: 'https://hooks.example.com/a',
    secret,
    updatedAt: '2026-11-28T00:00:00Z',
  });

  const { Item } = await created.clients.doc.send({
    operation: 'GetItem',
    input: { TableName: created.tables.accounts, Key: { pk: 'ACCOUNT#acc-sealed', sk: 'ALERT_WEBHOOK' } },
  });
  const stored = JSON.stringify(Item);
  for (const form of [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex')])
    expect(stored).not.toContain(form);
  expect(Item).not.toHaveProperty('secret');
  expect(typeof Item!.sealed_secret).toBe('string');

  const webhook = await store.webhook('acc-sealed');
  expect(webhook?.secret).toBe(secret);
  const body = '{"type":"budget.threshold"}';
  expect(signature(body, webhook!.secret, 1_800_000_000)).toBe(
    `t=1800000000,v1=${createHmac('sha256', secret).update(`1800000000.${body}`).digest('hex')}`,
  );

  // The same sealed item copied to another account does not open there.
  await created.clients.doc.send({
    operation: 'PutItem',
    input: { TableName: created.tables.accounts, Item: { ...Item, pk: 'ACCOUNT#acc-other' } },
  });
  await expect(store.webhook('acc-other')).rejects.toThrow();
});
