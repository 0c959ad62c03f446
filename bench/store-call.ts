/**
 * What one store call costs, on the client side: the same GetItem on the same
 * DynamoDB Local, made four ways and measured in interleaved rounds.
 * - the proxy's own store client, as lambda/store/dynamodb/client.ts builds it;
 * - the AWS SDK's DocumentClient (lib-dynamodb), the usual way to call DynamoDB from Node;
 * - the SDK's low-level client with pre-marshalled keys and `cacheMiddleware: true` (the SDK then
 *   resolves its middleware stack once per command type instead of on every send);
 * - a bare node:http POST of the same JSON (no SDK, no signing): the floor.
 * CPU is this process's own time over sequential calls; nothing else runs here meanwhile.
 *
 * It is also the benchmark's yardstick: the latency of a GetItem and of the pre-upstream wave
 * through the proxy's client, sampled once on a cold store (at the start) and then in every
 * round of the c=1 phases, interleaved with the contenders, so that the budget's "one store round
 * trip" is measured warm, under the same outside load as the requests it is compared with.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent, request } from 'node:http';
import { parseToken } from '../lambda/auth/proxy-token';
import { loadConfig } from '../lambda/config';
import { buildDeps } from '../lambda/deps';
import type { Logger } from '../lambda/logger';
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { startLookupsFor } from '../lambda/pipeline/start-lookups';
import { providerById } from '../lambda/providers/registry';
import { median } from './stats';

export type StoreCallCpu = { proxyClient: number; sdkDocumentClient: number; sdkLowLevelCachedMiddleware: number; bareHttp: number };

/** Latency samples of the store alone, through the proxy's own client. */
export interface StoreSamples {
  /** A sequential GetItem of a missing key (the cheapest call). */
  getItem: number[];
  /**
   * The store work a stored-key request waits for before its upstream call, made by the proxy's
   * own store adapters (built by its composition root) and started by lambda/pipeline/start-lookups.ts
   * itself: the token gate, the budgets its answer calls for, the stored key (from the instance's
   * short cache when warm). However the request path groups them (warm: the gate's one conditional
   * UpdateItem), this is that wave, and it is "one round trip" of the latency budget. DynamoDB Local
   * takes longer for a conditional write than for a read, so the wave is longer than the GetItem.
   */
  wave: number[];
  /**
   * The same wave sent just after a usage row's write (the row with its spend counters, one
   * transaction) has been started: what a request meets when it arrives while the previous
   * request's row is being written, as back to back on one long-lived process.
   */
  waveBesideRowWrite: number[];
}

export interface StoreYardstick {
  /** `count` GetItems, then `count` waves, one at a time, with `pauseMs` after each. */
  sample(count: number, pauseMs?: number): Promise<StoreSamples>;
  /** Client CPU of one GetItem, four ways, each warmed by 300 calls, in interleaved rounds. */
  clientCpu(callsPerRound: number, rounds: number): Promise<StoreCallCpu>;
  close(): void;
}

function bareGet(endpoint: URL, agent: Agent, table: string): Promise<unknown> {
  const body = JSON.stringify({ TableName: table, Key: { pk: { S: 'ACCOUNT#bench-none' }, sk: { S: 'ACCOUNT' } } });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: endpoint.hostname,
        port: endpoint.port,
        method: 'POST',
        path: '/',
        agent,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.GetItem',
          // DynamoDB Local does not check signatures; real DynamoDB would need SigV4 here (tens of µs).
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20240101/eu-west-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(parts).toString('utf8'))));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface StoreTarget {
  /** The proxy instance's table prefix: the wave reads and writes its items. */
  tablePrefix: string;
  /** An existing proxy token of that instance, so that the reads find items. */
  token: string;
  /** A directory for the adapters' local files (the local master key, the row spool). */
  dataDir: string;
}

const SILENT: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Opens the store clients; nothing is measured until `sample` or `clientCpu` is called. */
export function openStoreYardstick(endpoint: string, target: StoreTarget): StoreYardstick {
  const deps = buildDeps(
    loadConfig({ DYNAMODB_ENDPOINT: endpoint, TABLE_PREFIX: target.tablePrefix, DATA_DIR: target.dataDir, RATE_LIMIT_PER_MINUTE: '1000000000', AWS_REGION: 'eu-west-1' }),
    SILENT,
  );
  const token = parseToken(target.token);
  if (!token) throw new Error('the yardstick needs a proxy token');
  const table = deps.config.tables.accounts;
  // The SDK's notice about its future Node 22 requirement is noise here (the local server silences it too).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { doc, raw } = createDynamoClients({ region: 'eu-west-1', endpoint });
  const sdkClient = (cacheMiddleware: boolean) =>
    new DynamoDBClient({
      region: 'eu-west-1',
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      cacheMiddleware,
      requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true }) }),
    });
  const sdkDoc = DynamoDBDocumentClient.from(sdkClient(false));
  const lowLevel = sdkClient(true);
  const key = { pk: 'ACCOUNT#bench-none', sk: 'ACCOUNT' };
  const agent = new Agent({ keepAlive: true });
  const url = new URL(endpoint);
  const variants = {
    proxyClient: () => doc.send({ operation: 'GetItem', input: { TableName: table, Key: key } }),
    sdkDocumentClient: () => sdkDoc.send(new GetCommand({ TableName: table, Key: key })),
    sdkLowLevelCachedMiddleware: () => lowLevel.send(new GetItemCommand({ TableName: table, Key: { pk: { S: key.pk }, sk: { S: key.sk } } })),
    bareHttp: () => bareGet(url, agent, table),
  };
  // What startLookups starts for a stored-key request without a cache header, by the same code.
  const provider = providerById('prov-b');
  if (!provider) throw new Error('the yardstick needs provider prov-b');
  const wave = () => {
    const lookups = startLookupsFor(deps, { token, requester: undefined, mode: 'stored', provider, cache: { mode: 'off', ttlSeconds: 0 } });
    return Promise.all([lookups.gate, lookups.budgets, lookups.providerKey]);
  };
  let rowCount = 0;
  const rowWrite = () => {
    const at = new Date();
    const id = `${at.getTime().toString(36)}-yardstick${String(rowCount++).padStart(8, '0')}`;
    return deps.usageLog.write({
      ...{ account_id: token.accountId, id, ts: at.toISOString(), provider: 'prov-b', kind: 'chat', model: 'gpt-4o-mini', input_tokens: 100, output_tokens: 20 },
      ...{ cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.000027, cost_nanos: 27_000, priced: true, latency_ms: 3, status_code: 200, cached: false },
      ...{ saved_usd: 0, saved_nanos: 0, stream: false, mode: 'stored', token_id: token.tokenId },
    });
  };
  const timed = async (call: () => Promise<unknown>, into: number[]) => {
    const started = performance.now();
    await call();
    into.push(performance.now() - started);
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    async sample(count, pauseMs = 0) {
      const samples: StoreSamples = { getItem: [], wave: [], waveBesideRowWrite: [] };
      for (let i = 0; i < count; i++) {
        await timed(variants.proxyClient, samples.getItem);
        if (pauseMs) await pause(pauseMs);
      }
      for (let i = 0; i < count; i++) {
        await timed(wave, samples.wave);
        if (pauseMs) await pause(pauseMs);
      }
      for (let i = 0; i < count; i++) {
        const writing = rowWrite();
        await timed(wave, samples.waveBesideRowWrite);
        await writing;
        if (pauseMs) await pause(pauseMs);
      }
      return samples;
    },
    async clientCpu(callsPerRound, rounds) {
      const cpu: Record<keyof typeof variants, number[]> = { proxyClient: [], sdkDocumentClient: [], sdkLowLevelCachedMiddleware: [], bareHttp: [] };
      const entries = Object.entries(variants) as Array<[keyof typeof variants, () => Promise<unknown>]>;
      // The SDK's code paths take a few hundred calls to be optimised; measure them warm, as a busy instance runs them.
      for (const [, call] of entries) for (let i = 0; i < 300; i++) await call();
      for (let round = 0; round < rounds; round++) {
        for (const [name, call] of entries) {
          for (let i = 0; i < 10; i++) await call();
          const before = process.cpuUsage();
          for (let i = 0; i < callsPerRound; i++) await call();
          const used = process.cpuUsage(before);
          cpu[name].push((used.user + used.system) / 1000 / callsPerRound);
        }
      }
      return {
        proxyClient: median(cpu.proxyClient),
        sdkDocumentClient: median(cpu.sdkDocumentClient),
        sdkLowLevelCachedMiddleware: median(cpu.sdkLowLevelCachedMiddleware),
        bareHttp: median(cpu.bareHttp),
      };
    },
    close() {
      raw.destroy();
      sdkDoc.destroy();
      lowLevel.destroy();
      agent.destroy();
    },
  };
}
