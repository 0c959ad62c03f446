/**
 * In Lambda a row the store still refuses after every retry is printed whole as one log line
 * (`usage row spooled`, docs/failure-modes.md); the local server keeps it in a spool file. Both hold
 * the row as the table would: its requester label, tags and model scrubbed of the request's
 * credentials (SECURITY.md, "What is scrubbed where"). The store's refusal is real: the row goes to
 * a table DynamoDB Local doesn't have.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDocumentClient } from '../../lambda/store/dynamodb/client';
import { DynamoUsageLog } from '../../lambda/usage/dynamodb/usage-log';
import { FileRowSpool, LogRowSpool } from '../../lambda/usage/row-spool';
import { RowWriter } from '../../lambda/usage/row-writer';
import { startInProcessProxy, type InProcessProxy } from '../support/in-process-proxy';
import { callProxy } from './support/requests';
import { tokenSecret } from '../security/support/observed';

jest.setTimeout(120_000);

let proxy: InProcessProxy;
let absent: DynamoUsageLog;
const spoolDir = mkdtempSync(join(tmpdir(), 'spool-scrub-'));
beforeAll(async () => {
  proxy = await startInProcessProxy();
  const { config } = proxy.deps;
  const doc = createDocumentClient({ region: config.region, endpoint: config.dynamoEndpoint });
  absent = new DynamoUsageLog(doc, `${config.tables.usageLogs}-absent`, config.logRetentionDays);
});
afterAll(async () => {
  // Also fails if any log line held a secret of the test.
  await proxy?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

/** A request whose requester label, tag and model quote the proxy token or its secret part; its row is refused. */
async function refusedRow(): Promise<string> {
  const token = proxy.token;
  const result = await callProxy(proxy, {
    provider: 'prov-b',
    token,
    headers: { 'x-proxy-user': `alice ${token}`, 'x-proxy-tags': `team=${tokenSecret(token)}` },
    body: {
      model: `gpt-4o-mini ${tokenSecret(token)}`,
      max_tokens: 8,
      messages: [{ role: 'user', content: 'spooled' }],
    },
  });
  expect(result.status).toBe(200);
  await proxy.settled();
  return result.requestId;
}

const scrubbed = (requestId: string) => ({
  id: requestId,
  requester: 'alice [redacted]',
  tags: { team: '[redacted]' },
  model: 'gpt-4o-mini [redacted]',
});

test('Lambda: the spooled row in the log line carries [redacted] where the client put the proxy token and its secret part', async () => {
  // Lambda's spool (lambda/wiring/deps.ts picks it where KMS holds the keys), over a store that refuses every row.
  proxy.deps.rowWriter = new RowWriter(absent, new LogRowSpool(proxy.deps.log));
  const requestId = await refusedRow();
  const line = proxy.logged.find(
    (entry) => entry.includes('"message":"usage row spooled"') && entry.includes(requestId),
  );
  expect(line).toBeDefined();
  const { row } = JSON.parse(line!) as { row: Record<string, unknown> };
  expect(row).toMatchObject(scrubbed(requestId));
  expect(line!.includes(tokenSecret(proxy.token))).toBe(false);
});

test('local server: the spool file holds the same scrubbed row', async () => {
  const file = join(spoolDir, 'row-spool.jsonl');
  proxy.deps.rowWriter = new RowWriter(absent, new FileRowSpool(file, proxy.deps.log));
  const requestId = await refusedRow();
  const text = readFileSync(file, 'utf8');
  expect(JSON.parse(text.trim()) as Record<string, unknown>).toMatchObject(scrubbed(requestId));
  expect(text.includes(tokenSecret(proxy.token))).toBe(false);
});
