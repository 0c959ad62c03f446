import { randomBytes } from 'node:crypto';
import { createDynamoClients, type DynamoClients } from '../../lambda/store/dynamodb/client';
import { ensureTables } from '../../lambda/store/dynamodb/create-tables';
import { tableNames } from '../../lambda/store/tables';

/** Fresh, uniquely prefixed tables on the run's DynamoDB Local, for store-level tests. */
export async function createTestTables(): Promise<{
  clients: DynamoClients;
  tables: ReturnType<typeof tableNames>;
  prefix: string;
}> {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint)
    throw new Error(
      'DYNAMODB_ENDPOINT is not set: the integration project starts DynamoDB Local (jest.config.js); a test that needs the store belongs there, not in test/unit',
    );
  const prefix = `t${randomBytes(4).toString('hex')}-`;
  const clients = createDynamoClients({ region: 'eu-west-1', endpoint });
  const tables = tableNames({}, prefix);
  await ensureTables(clients.raw, tables);
  return { clients, tables, prefix };
}
