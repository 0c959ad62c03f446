import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTables } from '../../support/tables';
it('times', async () => {
  const { clients, tables } = await createTestTables();
  for (const conc of [1, 10, 50]) {
    const t = performance.now();
    for (let i = 0; i < 200; i += conc) await Promise.all(Array.from({ length: conc }, (_, j) => clients.doc.send(new UpdateCommand({ TableName: tables.usageStats, Key: { account_id: 'a', bucket: `k${(i + j) % 7}` }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } }))));
    console.log(conc, (performance.now() - t) / 200, 'ms/op same keys');
    const t2 = performance.now();
    for (let i = 0; i < 200; i += conc) await Promise.all(Array.from({ length: conc }, (_, j) => clients.doc.send(new UpdateCommand({ TableName: tables.usageStats, Key: { account_id: 'a', bucket: `u${conc}-${i + j}` }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } }))));
    console.log(conc, (performance.now() - t2) / 200, 'ms/op distinct keys');
  }
  clients.raw.destroy();
});
