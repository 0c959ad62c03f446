import { CreateTableCommand, DescribeTableCommand, UpdateTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLES, type TableId, type TableShape } from '../tables';

/** Creates any missing table (local runs only; in AWS the CDK stack owns the tables). */
export async function ensureTables(client: DynamoDBClient, names: Record<TableId, string>): Promise<void> {
  await Promise.all((Object.entries(TABLES) as [TableId, TableShape][]).map(([id, shape]) => ensureTable(client, names[id], shape)));
}

async function ensureTable(client: DynamoDBClient, name: string, shape: TableShape): Promise<void> {
  if (await tableExists(client, name)) return;
  const keys = [{ AttributeName: shape.partitionKey, KeyType: 'HASH' as const }];
  const attributes = [{ AttributeName: shape.partitionKey, AttributeType: 'S' as const }];
  if (shape.sortKey) {
    keys.push({ AttributeName: shape.sortKey.name, KeyType: 'RANGE' as unknown as 'HASH' });
    attributes.push({ AttributeName: shape.sortKey.name, AttributeType: shape.sortKey.type as 'S' });
  }
  try {
    await client.send(new CreateTableCommand({ TableName: name, KeySchema: keys, AttributeDefinitions: attributes, BillingMode: 'PAY_PER_REQUEST' }));
  } catch (error) {
    // Another process (a second local server on the same store) created it first.
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  if (shape.ttlAttribute) {
    await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: shape.ttlAttribute, Enabled: true } })).catch(() => {
      // Already enabled by a concurrent start; TTL is only clean-up, expiry is checked on read.
    });
  }
}

async function tableExists(client: DynamoDBClient, name: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return true;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return false;
    throw error;
  }
}
