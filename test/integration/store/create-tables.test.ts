import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { TABLES, type TableId } from '../../../lambda/store/tables';
import { createTestTables } from '../../support/tables';

describe('local table creation', () => {
  it('creates every table with the key schema and TTL attribute of its shape', async () => {
    const { clients, tables } = await createTestTables();
    for (const id of Object.keys(TABLES) as TableId[]) {
      const shape = TABLES[id];
      const { Table } = await clients.raw.send(new DescribeTableCommand({ TableName: tables[id] }));
      expect(Table?.KeySchema?.[0]).toEqual({ AttributeName: shape.partitionKey, KeyType: 'HASH' });
      if ('sortKey' in shape)
        expect(Table?.KeySchema?.[1]).toEqual({ AttributeName: shape.sortKey.name, KeyType: 'RANGE' });
      if ('ttlAttribute' in shape) {
        const ttl = await clients.raw.send(new DescribeTimeToLiveCommand({ TableName: tables[id] }));
        expect(ttl.TimeToLiveDescription?.AttributeName).toBe(shape.ttlAttribute);
      }
    }
    clients.raw.destroy();
  });
});
