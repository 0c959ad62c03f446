/**
 * CPU of the request path's two store calls in this process, four ways (docs/decisions.md,
 * "DynamoDB through the AWS SDK"):
 *
 * - stores' client: lambda/store/dynamodb/document-client.ts as the stores use it: single-item
 *   calls signed and sent on the SDK client's parts without its middleware stack (item-calls.ts),
 *   items marshalled by `@aws-sdk/util-dynamodb`;
 * - document commands: `@aws-sdk/lib-dynamodb`'s, with a deadline's abort signal on each call (what
 *   the stores sent before): the middleware is resolved on every call;
 * - SDK commands resolved once: the SDK's own commands, input marshalled ahead, through a client that
 *   resolves each operation's middleware once (`cacheMiddleware`), as the stores sent them before;
 * - signed JSON: one SigV4-signed POST (`@smithy/signature-v4`) over a kept-alive connection, no
 *   SDK middleware at all: a floor for what any client could cost.
 *
 * The calls are the token gate's UpdateItem, in the shape lambda/auth/dynamodb/token-gate.ts sends
 * for a token this instance has not seen yet (gate-count.ts; the widest of its usual shapes), and the usage row's PutItem (about
 * 1 KB). Each variant runs `CALLS` gate-and-row pairs per batch; the batches are interleaved (the
 * order rotated each round), and the CPU of each batch is `process.cpuUsage()` around it. DynamoDB
 * Local runs in its own process, so its CPU is not counted. Run: `npx tsx bench/store-calls.ts` (Node 22).
 */
import { DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { startDynamoDbLocal } from '../lambda/local/dynamodb-local';
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { ensureTables } from '../lambda/store/dynamodb/create-tables';
import { tableNames } from '../lambda/store/tables';
import { NodeSha256 } from '../lambda/upstream/aws-signing';
import { gateInput, seedGates } from './gate-call';
import { median } from './stats';

const ROUNDS = Number(process.env.ROUNDS ?? 12);
const CALLS = Number(process.env.CALLS ?? 200);
const REGION = 'eu-west-1';

const tables = tableNames({}, 'ab-');
function rowItem(n: number) {
  const ts = new Date().toISOString();
  const id = `ab-${n}-${Math.random().toString(36).slice(2)}`;
  return {
    account_id: 'acct-ab#3',
    ts_id: `${ts}#${id}`,
    id,
    ts,
    provider: 'prov-b',
    kind: 'chat',
    model: 'gpt-4o-mini-2024-07-18',
    input_tokens: 412,
    output_tokens: 128,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: 0.0001386,
    cost_nanos: 138_600,
    priced: true,
    latency_ms: 2_812,
    requester: 'billing-service',
    tags: { team: 'payments', env: 'prod' },
    status_code: 200,
    cached: false,
    saved_usd: 0,
    saved_nanos: 0,
    stream: false,
    mode: 'stored',
    token_id: 'tok-ab',
    key_suffix: 'x1Yz',
    expires_at: Math.floor(Date.now() / 1000) + 90 * 86_400,
  };
}

/** The low-level input of a document-form call: its values marshalled ahead, as a hand-written adapter would send them. */
const marshalledGate = (n: number) => {
  const input = gateInput(tables.rateLimits, n);
  return { ...input, Key: marshall(input.Key), ExpressionAttributeValues: marshall(input.ExpressionAttributeValues) };
};

async function main() {
  const store = await startDynamoDbLocal();
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const { raw, doc } = createDynamoClients({ region: REGION, endpoint: store.endpoint });
  await ensureTables(raw, tables);
  await seedGates(doc, tables.rateLimits);
  const documents = DynamoDBDocumentClient.from(raw, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
  const deadline = () => ({ abortSignal: AbortSignal.timeout(10_000) });
  const resolvedOnce = new DynamoDBClient({
    region: REGION,
    endpoint: store.endpoint,
    credentials,
    maxAttempts: 1,
    requestHandler: raw.config.requestHandler,
    cacheMiddleware: true,
  });

  const url = new URL(store.endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const signer = new SignatureV4({ service: 'dynamodb', region: REGION, credentials, sha256: NodeSha256 });
  async function signedJson(target: string, body: unknown): Promise<void> {
    const text = JSON.stringify(body);
    const signed = await signer.sign({
      method: 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: '/',
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${target}`,
        'content-length': String(Buffer.byteLength(text)),
      },
      body: text,
    });
    await new Promise<void>((resolve, reject) => {
      const req = request(
        { agent, host: url.hostname, port: url.port, method: 'POST', path: '/', headers: signed.headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(Buffer.concat(chunks).toString()));
            else {
              JSON.parse(Buffer.concat(chunks).toString('utf8'));
              resolve();
            }
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  }

  const variants: Record<string, (n: number) => Promise<unknown>> = {
    "stores' client": async (n) => {
      await doc.send({ operation: 'UpdateItem', input: gateInput(tables.rateLimits, n) });
      await doc.send({ operation: 'PutItem', input: { TableName: tables.usageLogs, Item: rowItem(n) } });
    },
    'document commands': async (n) => {
      await documents.send(new UpdateCommand(gateInput(tables.rateLimits, n)), deadline());
      await documents.send(new PutCommand({ TableName: tables.usageLogs, Item: rowItem(n) }), deadline());
    },
    'SDK commands resolved once': async (n) => {
      await resolvedOnce.send(new UpdateItemCommand(marshalledGate(n)));
      await resolvedOnce.send(new PutItemCommand({ TableName: tables.usageLogs, Item: marshall(rowItem(n)) }));
    },
    'signed JSON': async (n) => {
      await signedJson('UpdateItem', marshalledGate(n));
      await signedJson('PutItem', { TableName: tables.usageLogs, Item: marshall(rowItem(n)) });
    },
  };
  const order = Object.keys(variants);
  const perCall: Record<string, number[]> = Object.fromEntries(order.map((name) => [name, []]));
  const loads: number[] = [];
  // One unmeasured pass each: the connections, the JIT's first compile.
  for (const name of order) for (let n = 0; n < 20; n++) await variants[name](n);
  for (let round = 0; round < ROUNDS; round++) {
    const rotated = [...order.slice(round % order.length), ...order.slice(0, round % order.length)];
    for (const name of rotated) {
      const before = process.cpuUsage();
      for (let n = 0; n < CALLS; n++) await variants[name](n);
      const used = process.cpuUsage(before);
      // Two calls per pair: microseconds per call.
      perCall[name].push((used.user + used.system) / (CALLS * 2));
    }
    loads.push(loadavg()[0]);
  }
  console.log(`${ROUNDS} rounds of ${CALLS} gate + row pairs per variant, interleaved; Node ${process.version}`);
  console.log(
    `load average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
  console.log('| variant | CPU µs per call, median of rounds [min–max] |');
  console.log('|---|---|');
  for (const name of order) {
    const rounds = perCall[name];
    console.log(
      `| ${name} | ${median(rounds).toFixed(0)} [${Math.min(...rounds).toFixed(0)}–${Math.max(...rounds).toFixed(0)}] |`,
    );
  }
  agent.destroy();
  raw.destroy();
  await store.stop();
}

await main();
