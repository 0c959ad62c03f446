/**
 * `LOG_RETENTION_DAYS` (docs/operations.md, "Configuration"): when set, each usage row carries the
 * DynamoDB TTL attribute of the usage-logs table, that many days after the request's time; unset, rows
 * carry none and never expire. Read from the table itself, as DynamoDB's TTL reads it.
 */
import { DescribeTimeToLiveCommand, DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { tableNames } from '../../lambda/store/tables';
import { rowPartition } from '../../lambda/usage/dynamodb/row-shards';
import { startProxy, type ProxyServer } from '../support/proxy-server';

const DAY_SECONDS = 86_400;
const dynamo = new DynamoDBClient({
  region: 'eu-west-1',
  endpoint: process.env.DYNAMODB_ENDPOINT,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
afterAll(() => dynamo.destroy());

/** Sends one chat request and returns the stored item of its usage row, as DynamoDB holds it. */
async function storedRow(
  proxy: ProxyServer,
  prefix: string,
): Promise<{ ts: string; expiresAt?: number; table: string }> {
  const answer = await fetch(`${proxy.proxyBase}/prov-b/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  expect(answer.status).toBe(200);
  await answer.text();
  const [row] = await proxy.rowsFor(proxy.account.token, [answer.headers.get('x-proxy-request-id')!]);
  const table = tableNames({}, prefix).usageLogs;
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'account_id = :a',
      ExpressionAttributeValues: { ':a': { S: rowPartition(proxy.account.accountId, row!.id as string) } },
    }),
  );
  expect(Items).toHaveLength(1);
  const item = Items![0]!;
  expect(item.id?.S).toBe(row!.id);
  return {
    ts: item.ts!.S!,
    expiresAt: item.expires_at?.N === undefined ? undefined : Number(item.expires_at.N),
    table,
  };
}

test('with LOG_RETENTION_DAYS=30, a row expires 30 days after its request, by the table TTL attribute', async () => {
  const prefix = `r${randomBytes(4).toString('hex')}-`;
  const proxy = await startProxy({ tablePrefix: prefix, env: { LOG_RETENTION_DAYS: '30' } });
  try {
    const { ts, expiresAt, table } = await storedRow(proxy, prefix);
    expect(expiresAt).toBe(Math.floor(Date.parse(ts) / 1000) + 30 * DAY_SECONDS);
    const ttl = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'expires_at', TimeToLiveStatus: 'ENABLED' });
  } finally {
    await proxy.stop();
  }
});

test('without LOG_RETENTION_DAYS, rows carry no expiry', async () => {
  const prefix = `r${randomBytes(4).toString('hex')}-`;
  const proxy = await startProxy({ tablePrefix: prefix });
  try {
    expect((await storedRow(proxy, prefix)).expiresAt).toBeUndefined();
  } finally {
    await proxy.stop();
  }
});
