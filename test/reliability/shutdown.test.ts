/**
 * SIGTERM (or Ctrl-C) lets requests in flight finish, writes their rows, and
 * only then exits 0. The rows are read straight from the table after the
 * process is gone, so they were written before it exited.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../../lambda/store/tables';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { sdkDocumentClient } from './support/dynamo';
import { credentialHeaders, ENDPOINT, requestBody, streamEndedCleanly } from './support/requests';
import { spawnServer, type ServerProcess } from './support/server-process';

jest.setTimeout(90_000);

const FIXED_USAGE = { inputTokens: 777, outputTokens: 88, cacheReadTokens: 0, cacheWriteTokens: 0 };
const OWN_KEY = 'client-own-key-shutdown-0001';

let fakes: AllFakes;
let server: ServerProcess;

beforeAll(async () => {
  fakes = await startAllFakes();
  server = await spawnServer({ ...fakes.env });
});
afterAll(async () => {
  server?.cleanUp();
  await fakes?.close();
});

test('SIGTERM: the stream in flight and a request still waiting for its upstream both complete, rows are written, exit code 0', async () => {
  const created = await fetch(`${server.url}/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
    body: '{"name":"shutdown"}',
  });
  expect(created.status).toBe(201);
  const { account_id: accountId, token } = (await created.json()) as { account_id: string; token: string };

  fakes.fakes['prov-a'].next({ chunkIntervalMs: 150, chunks: 16, usage: FIXED_USAGE });
  const streaming = await fetch(server.url + '/api/proxy' + ENDPOINT['prov-a'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-a', token, OWN_KEY) },
    body: JSON.stringify(requestBody('prov-a', 'long answer', true)),
  });
  expect(streaming.status).toBe(200);
  const reader = streaming.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });

  // A second request whose upstream has not answered yet when the signal comes.
  fakes.fakes['prov-b'].next({ latencyMs: 1000, usage: FIXED_USAGE });
  const waiting = fetch(server.url + '/api/proxy' + ENDPOINT['prov-b'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token, OWN_KEY) },
    body: JSON.stringify(requestBody('prov-b', 'slow to start')),
  });
  await fakes.fakes['prov-b'].waitForRequests(1);

  server.child.kill('SIGTERM');

  for (let i = 0; i < 10_000; i++) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  expect(streamEndedCleanly('prov-a', text)).toBe(true);
  const second = await waiting;
  expect(second.status).toBe(200);
  expect(JSON.parse(await second.text())).toHaveProperty('choices');

  expect(await server.exited).toBe(0);
  expect(server.output()).toMatch(/SIGTERM: finishing \d+ request\(s\) in flight/);
  expect(server.output()).toMatch(/stopped\n$/);
  expect(server.output()).not.toContain(OWN_KEY);

  const doc = sdkDocumentClient();
  const { Items = [] } = await doc.send(
    new QueryCommand({
      TableName: tableNames({}, server.tablePrefix).usageLogs,
      KeyConditionExpression: 'account_id = :account',
      ExpressionAttributeValues: { ':account': accountId },
      ConsistentRead: true,
    }),
  );
  const byProvider = Object.fromEntries(Items.map((item) => [item.provider as string, item]));
  expect(Items).toHaveLength(2);
  expect(byProvider['prov-a']).toMatchObject({ status_code: 200, stream: true, input_tokens: FIXED_USAGE.inputTokens, output_tokens: FIXED_USAGE.outputTokens });
  expect(byProvider['prov-a']!.error).toBeUndefined();
  expect(byProvider['prov-b']).toMatchObject({ status_code: 200, input_tokens: FIXED_USAGE.inputTokens, output_tokens: FIXED_USAGE.outputTokens });
});
