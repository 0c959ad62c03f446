import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createAccount } from '../../lambda/auth/issue';
import { EnvelopeSealer } from '../../lambda/keys/crypto/envelope';
import { LocalKeyWrapper } from '../../lambda/keys/crypto/local-key-wrapper';
import { DynamoAccountStore } from '../../lambda/auth/dynamodb/account-store';
import { DynamoProviderKeyStore } from '../../lambda/keys/dynamodb/provider-key-store';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { createTestTables } from '../support/tables';
import { rowPartition } from '../../lambda/usage/dynamodb/row-shards';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const BUNDLE = join(ROOT, 'dist/lambda/handler.mjs');
const HOST = join(__dirname, 'lambda-runtime-host.mjs');

interface Report {
  marked: boolean;
  contentType: string;
  ended: boolean;
  resolvedAt: number;
  writes: Array<{ at: number; base64: string }>;
}

/** A function URL event (payload format 2.0) as Lambda delivers it. */
function functionUrlEvent(path: string, headers: Record<string, string>, body: unknown) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: 'abc.lambda-url.eu-west-1.on.aws', 'x-forwarded-for': '203.0.113.9', ...headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc',
      domainName: 'abc.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}

let fakes: AllFakes;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let token: string;
let accountId: string;
let tables: Awaited<ReturnType<typeof createTestTables>>;

beforeAll(async () => {
  fakes = await startAllFakes();
  tables = await createTestTables();
  dataDir = mkdtempSync(join(tmpdir(), 'lambda-host-'));
  const accounts = new DynamoAccountStore(tables.clients.doc, tables.tables.accounts, tables.tables.rateLimits);
  const created = await createAccount(accounts, { name: 'lambda', now: new Date() });
  token = created.token;
  accountId = created.accountId;
  // Stored mode: a key sealed with the same local key the handler will find under DATA_DIR.
  const sealer = new EnvelopeSealer(LocalKeyWrapper.fromFile(join(dataDir, 'local-master.key')));
  const secret = await sealer.seal('anthropic-stored-key-123456', { account_id: accountId, provider: 'prov-a' });
  await new DynamoProviderKeyStore(tables.clients.doc, tables.tables.accounts).put(accountId, { provider: 'prov-a', secret, hint: '…3456', updatedAt: new Date().toISOString() });
  env = {
    ...process.env,
    ...fakes.env,
    TABLE_PREFIX: tables.prefix,
    DATA_DIR: dataDir,
    ADMIN_KEY: 'admin-key-for-the-lambda-runtime-test',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
});

afterAll(async () => {
  await fakes.close();
  rmSync(dataDir, { recursive: true, force: true });
  tables.clients.raw.destroy();
});

async function invoke(event: object): Promise<{ report: Report; prelude: { statusCode: number; headers: Record<string, string> }; body: string }> {
  const { stdout } = await run(process.execPath, [HOST, BUNDLE, JSON.stringify(event)], { env, cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const report = JSON.parse(stdout) as Report;
  const bytes = Buffer.concat(report.writes.map((w) => Buffer.from(w.base64, 'base64')));
  const separator = bytes.indexOf(Buffer.alloc(8));
  return { report, prelude: JSON.parse(bytes.subarray(0, separator).toString('utf8')), body: bytes.subarray(separator + 8).toString('utf8') };
}

describe('the exported Lambda handler under a stand-in of the streaming runtime', () => {
  it('writes the prelude, then streams an SSE answer event by event, and ends after the row is written', async () => {
    fakes.fakes['prov-a'].next({ chunks: 6, chunkIntervalMs: 60 });
    const event = functionUrlEvent('/api/proxy/v1/messages', { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'x-proxy-user': 'lambda-test' }, {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'stream please' }],
    });
    const { report, prelude, body } = await invoke(event);

    expect(report.marked).toBe(true);
    expect(report.contentType).toBe('application/vnd.awslambda.http-integration-response');
    expect(report.ended).toBe(true);
    expect(prelude.statusCode).toBe(200);
    expect(prelude.headers['content-type']).toContain('text/event-stream');
    expect(prelude.headers['x-proxy-request-id']).toBeTruthy();
    expect(body).toContain('event: message_start');
    expect(body).toContain('event: message_stop');

    // Streamed, not buffered: body writes are spread over the upstream's pacing.
    const bodyWrites = report.writes.slice(1).filter((w) => Buffer.from(w.base64, 'base64').length > 0);
    expect(bodyWrites.length).toBeGreaterThanOrEqual(6);
    expect(bodyWrites[bodyWrites.length - 1].at - bodyWrites[0].at).toBeGreaterThanOrEqual(250);

    // The upstream got the stored key in its own header, and nothing of the proxy's.
    const upstream = fakes.fakes['prov-a'].requests.at(-1)!;
    expect(upstream.headers['x-api-key']).toBe('anthropic-stored-key-123456');
    expect(upstream.headers['x-forwarded-for']).toBeUndefined();

    // The invocation resolved only after its usage row was durably written.
    const id = prelude.headers['x-proxy-request-id']!;
    const { Items } = await tables.clients.doc.send({ operation: 'Query', input: { TableName: tables.tables.usageLogs, KeyConditionExpression: 'account_id = :a', ExpressionAttributeValues: { ':a': rowPartition(accountId, id) } } });
    const row = Items!.find((item) => item.id === id)!;
    expect(row).toMatchObject({ provider: 'prov-a', stream: true, requester: 'lambda-test', status_code: 200, mode: 'stored' });
    expect(row.output_tokens).toBe(upstream.response.usage!.outputTokens);
  });

  it('answers errors in the endpoint shape through the same prelude protocol', async () => {
    const { prelude, body } = await invoke(functionUrlEvent('/api/proxy/prov-b/v1/chat/completions', { authorization: 'Bearer sk-proxy-wrong' }, { model: 'x', messages: [] }));
    expect(prelude.statusCode).toBe(401);
    expect(JSON.parse(body).error.type).toBe('authentication_error');
  });
});
