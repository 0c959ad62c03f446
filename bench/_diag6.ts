import { BatchGetCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { startBenchUpstream } from './fake-upstream';
import { startProxyServer } from './processes';
import { JSON_SHAPE } from './phases';
import { percentiles } from './stats';
const up = await startBenchUpstream(JSON_SHAPE);
const ddb = await startDynamoDbLocal();
const proxy = await startProxyServer({ upstreamOrigin: up.origin, dynamoEndpoint: ddb.endpoint });
const { doc } = createDynamoClients({ region: 'eu-west-1', endpoint: ddb.endpoint });
const acc = proxy.tablePrefix + 'accounts', rl = proxy.tablePrefix + 'rate-limits';
const m = /sk-proxy-([a-z0-9]{16})_([a-z0-9]{8})_/.exec(proxy.token)!;
const accountId = m[1], tokenId = `${m[1]}_${m[2]}`;
const ops: Record<string, () => Promise<unknown>> = {
  'GetItem missing key': () => doc.send(new GetCommand({ TableName: acc, Key: { pk: 'ACCOUNT#none', sk: 'ACCOUNT' } })),
  'GetItem token consistent': () => doc.send(new GetCommand({ TableName: acc, Key: { pk: `ACCOUNT#${accountId}`, sk: `TOKEN#${tokenId}` }, ConsistentRead: true })),
  'BatchGet token+key': () => doc.send(new BatchGetCommand({ RequestItems: { [acc]: { Keys: [{ pk: `ACCOUNT#${accountId}`, sk: `TOKEN#${tokenId}` }, { pk: `ACCOUNT#${accountId}`, sk: 'KEY#prov-b' }], ConsistentRead: true } } })),
  'UpdateItem rate limit': () => doc.send(new UpdateCommand({ TableName: rl, Key: { counter_key: `${tokenId}#bench` }, UpdateExpression: 'ADD #count :one SET expires_at = :e', ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':one': 1, ':limit': 1e9, ':e': 1 }, ReturnValues: 'UPDATED_NEW' })),
};
ops['wave: BatchGet ‖ Update'] = () => Promise.all([ops['BatchGet token+key']!(), ops['UpdateItem rate limit']!()]);
for (const [k, f] of Object.entries(ops)) for (let i = 0; i < 100; i++) await f();
const res: Record<string, number[]> = {};
for (let round = 0; round < 3; round++) for (const [k, f] of Object.entries(ops)) for (let i = 0; i < 150; i++) { const t = performance.now(); await f(); (res[k] ??= []).push(performance.now() - t); }
for (const [k, v] of Object.entries(res)) { const p = percentiles(v); console.log(k.padEnd(28), p.p50.toFixed(2), p.p95.toFixed(2)); }
await proxy.stop(); await ddb.stop(); await up.close();
