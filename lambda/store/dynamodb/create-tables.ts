import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { TABLES, type TableId, type TableShape } from '../tables';

/** Creates any missing table (local runs only; in AWS the CDK stack owns the tables). */
export async function ensureTables(client: DynamoDBClient, names: Record<TableId, string>): Promise<void> {
  await Promise.all(
    (Object.entries(TABLES) as [TableId, TableShape][]).map(([id, shape]) => ensureTable(client, names[id], shape)),
  );
}

async function ensureTable(client: DynamoDBClient, name: string, shape: TableShape): Promise<void> {
  const existing = await describeTable(client, name);
  if (existing) return ensureStream(client, existing, shape);
  const keys = [{ AttributeName: shape.partitionKey, KeyType: 'HASH' as const }];
  const attributes = [{ AttributeName: shape.partitionKey, AttributeType: 'S' as const }];
  if (shape.sortKey) {
    keys.push({ AttributeName: shape.sortKey.name, KeyType: 'RANGE' as unknown as 'HASH' });
    attributes.push({ AttributeName: shape.sortKey.name, AttributeType: shape.sortKey.type as 'S' });
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        KeySchema: keys,
        AttributeDefinitions: attributes,
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: shape.stream ? { StreamEnabled: true, StreamViewType: shape.stream } : undefined,
      }),
    );
  } catch (error) {
    // Another process (a second local server on the same store) created it first.
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  if (shape.ttlAttribute) {
    await client
      .send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { AttributeName: shape.ttlAttribute, Enabled: true },
        }),
      )
      .catch(() => {
        // Already enabled by a concurrent start; TTL is only clean-up, expiry is checked on read.
      });
  }
}

/** A table made by an earlier version (before the rollups came from the stream) gets its stream now. */
async function ensureStream(client: DynamoDBClient, table: TableDescription, shape: TableShape): Promise<void> {
  if (!shape.stream || table.StreamSpecification?.StreamEnabled) return;
  await client
    .send(
      new UpdateTableCommand({
        TableName: table.TableName,
        StreamSpecification: { StreamEnabled: true, StreamViewType: shape.stream },
      }),
    )
    .catch((error: Error) => {
      // A concurrent start enabled it first.
      if (error.name !== 'ValidationException' && error.name !== 'ResourceInUseException') throw error;
    });
}

async function describeTable(client: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}
