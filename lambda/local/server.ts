import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadConfig, type Config } from '../wiring/config';
import { buildDeps, buildFoldDeps, buildLocalStoreClients, type Deps } from '../wiring/deps';
import { describeError, jsonLogger } from '../base/logger';
import { createProxyHandler, PROXY_BASE } from '../wiring/proxy-handler';
import { ensureTables } from '../store/dynamodb/create-tables';
import { bannerLines } from './banner';
import { JavaMissingError, startDynamoDbLocal } from './dynamodb-local';
import { dataDirGuard, keepDataPrivate } from './data-dir';
import { firstRunAccount, localAdminKey, markTokenShown } from './first-run';
import type { StreamPoller } from './stream-poller';
import { toFunctionUrlEvent } from './function-url-event';
import { InFlightRequests } from './requests-in-flight';
import { checkSharedKeyMaterial, ForeignKeyMaterialError } from './key-material';
import { installLambdaShim } from './lambda-shim';
import { listenOrExplain, PortUnavailableError } from './listen';
import { localStreamPoller } from './stats-consumer';

/**
 * `npm start`: the Lambda handler behind a Node HTTP server. Each request
 * becomes a function URL event; the handler streams its answer straight into
 * the Node response, exactly as it streams into Lambda's response stream.
 *
 * Start order: bind the port, start the store, then create anything (admin key, first account),
 * so a busy port or a missing Java leaves nothing half made.
 */

/**
 * Shutdown budget (docs/operations.md, "Stopping the server"): requests in flight get FINISH_REQUESTS_MS to
 * end on their own, then are cut; rows get until WRITE_ROWS_MS to reach the store, then go to
 * the spool file. The process is gone within EXIT_BY_MS, under the 10 s `docker stop` and
 * Kubernetes give before SIGKILL.
 */
const FINISH_REQUESTS_MS = 6_000;
const WRITE_ROWS_MS = 8_000;
const EXIT_BY_MS = 9_500;

type StreamingHandler = (event: unknown, response: ServerResponse, context: object) => Promise<void>;

let stopDynamo: (() => Promise<void>) | undefined;

let dataDirAtStart: ReturnType<typeof dataDirGuard> | undefined;

async function main(): Promise<void> {
  const config = loadConfig();
  const newToken = process.argv.includes('--new-token');
  // Nothing is created in DATA_DIR before the port and the store are this process's own.
  keepDataPrivate(config.dataDir);
  dataDirAtStart = dataDirGuard(config.dataDir);
  // The SDK versions are pinned in package-lock.json; its notice about future Node versions is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  const inFlight = new InFlightRequests();
  let ready: { handler: StreamingHandler; deps: Deps } | undefined;
  let becomeReady!: () => void;
  const readyGate = new Promise<void>((done) => (becomeReady = done));
  const server = createServer((request, response) => void serve(request, response));
  server.keepAliveTimeout = 65_000;
  // A client that half-closes its side once its request is sent (`socket.end()` right after writing it,
  // as some scripts and HTTP/1.0 tools do) still gets its answer from the management API and the
  // dashboard, then the connection closes. Node's server otherwise drops such a request unanswered;
  // the flag is its own switch for this (not in its typings). Proxied requests: see `leaveOnHalfClose`.
  (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const cut = inFlight.begin(response);
    const stopWatching = leaveOnHalfClose(request, response);
    try {
      await readyGate;
      const { handler } = ready!;
      const event = await toFunctionUrlEvent(request, response);
      // A client that leaves before the provider answers stops the upstream call too.
      const abandoned = new Promise<void>((resolve) =>
        response.once('close', () => {
          if (response.writableFinished) return;
          cut.abort();
          resolve();
        }),
      );
      const handled = handler(event, response, {
        awsRequestId: event.requestContext.requestId,
        clientGone: cut.signal,
      });
      // Writing to a response whose client left may never settle; its rows are still tracked by deps.background.
      await Promise.race([handled, abandoned.then(() => new Promise((resolve) => setTimeout(resolve, 5_000).unref()))]);
    } catch (error) {
      if (!response.destroyed) ready?.deps.log.warn('local adapter: request ended with an error', describeError(error));
      // The response has started (or the client left); all that remains is to close it.
      if (!response.headersSent)
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":{"message":"Internal error","type":"server_error"}}');
      else response.destroy();
    } finally {
      stopWatching();
      inFlight.end(response);
    }
  };

  await listenOrExplain(server, config.port, config.host);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), EXIT_BY_MS).unref();
    const started = Date.now();
    process.stdout.write(`${signal}: finishing ${inFlight.size} request(s) in flight…\n`);
    server.close();
    inFlight.stopKeepingAlive();
    server.closeIdleConnections();
    if (!(await inFlight.settled(FINISH_REQUESTS_MS))) {
      process.stdout.write(
        `${signal}: ${inFlight.size} request(s) still running after ${FINISH_REQUESTS_MS / 1000} s: ending them\n`,
      );
      inFlight.cutAll();
      // A cut request records its row as its upstream call fails, a few promise turns after the abort:
      // let those run before waiting for the rows.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (ready) await stopServing(ready.deps, started + WRITE_ROWS_MS);
    await stopDynamo?.();
    process.stdout.write('stopped\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  let storeEndpoint = config.dynamoEndpoint;
  if (!storeEndpoint) {
    const local = await startDynamoDbLocal(config.dataDir);
    storeEndpoint = local.endpoint;
    stopDynamo = () => local.stop();
  }
  if (stopping) return;
  dataDirAtStart.release();
  const admin = localAdminKey(config.dataDir, config.adminKey);
  // The environment's configuration, completed with what this start decided (store endpoint, admin key).
  const running: Config = { ...config, dynamoEndpoint: storeEndpoint, adminKey: admin.key };
  const stores = buildLocalStoreClients(running);
  await prepareStore(running, stores.tables);
  // One process serves many requests at once here: identical cache requests in flight share one upstream call.
  const deps = buildDeps(running, jsonLogger, { shareInFlightAnswers: true });
  // Middy marks the handler through the runtime's global when it is created, so the shim comes first.
  installLambdaShim();
  const handler = createProxyHandler(deps) as unknown as StreamingHandler;
  deps.rowSpool.startReplay((row) => deps.rowWriter.writeOnce(row));
  // The rollups come from the usage-logs stream, as in AWS; here this process reads it about once a second.
  // Queued budget alerts are sent by a loop of their own (SQS invokes the consumer in AWS), in the
  // process that folds the stream: with STATS_CONSUMER=off, the separate consumer does both, and
  // this process builds nothing of the fold.
  if (running.statsConsumer) {
    const foldDeps = buildFoldDeps(running, deps.log);
    statsPoller = localStreamPoller({ ...foldDeps, usageStats: deps.usageStats }, stores);
    alertLoop = foldDeps.localAlertLoop;
  }
  alertLoop?.start();
  // Whatever the stream holds is folded (and, after a trimmed position, the rollups completed
  // from the usage-logs table) before the first request, so the overview starts whole.
  await statsPoller?.catchUp();
  statsPoller?.start();
  const firstAccount = await firstRunAccount(running.dataDir, deps.accounts, { newToken });

  ready = { handler, deps };
  becomeReady();
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  process.stdout.write(
    bannerLines({ base, config: running, ownStore: Boolean(stopDynamo), admin, firstAccount }).join('\n') + '\n',
  );
  markTokenShown(config.dataDir);
}

let statsPoller: StreamPoller | undefined;
let alertLoop: { start(): void; stop(): Promise<void> } | undefined;

/** Tables exist, and (with the local key) this instance can open the keys already in the store. */
async function prepareStore(config: Config, tables: DynamoDBClient): Promise<void> {
  await ensureTables(tables, config.tables);
  if (!config.kmsKeyId) await checkSharedKeyMaterial(tables, config.tables.accounts, config.dataDir);
}

/** Rows of finished requests reach the store (or, past the deadline, the spool); the replay is suspended. */
async function stopServing(deps: Deps, deadline: number): Promise<void> {
  const drained = await Promise.race([
    deps.background.drain().then(() => true),
    sleep(deadline - Date.now()).then(() => false),
  ]);
  if (!drained) await deps.rowWriter.spoolUnwritten();
  await deps.rowSpool.stop();
  // The rows just written are folded into the rollups before the store goes away (within the same deadline).
  if (statsPoller) await Promise.race([statsPoller.stop(), sleep(deadline - Date.now())]);
  // An attempt under way finishes or its message comes again after its lease: none is lost.
  if (alertLoop) await Promise.race([alertLoop.stop(), sleep(deadline - Date.now())]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const KNOWN_START_ERRORS = [JavaMissingError, PortUnavailableError, ForeignKeyMaterialError];

main().catch(async (error) => {
  const known =
    KNOWN_START_ERRORS.some((type) => error instanceof type) || /^Invalid configuration/.test((error as Error).message);
  process.stderr.write(`${known ? (error as Error).message : `Failed to start: ${(error as Error).stack ?? error}`}\n`);
  await stopDynamo?.();
  dataDirAtStart?.undo();
  process.exit(1);
});

/**
 * A proxied request whose client half-closes its side is taken as a client that left, as before
 * half-open connections were allowed: at the socket a client that gave up (an SDK's abort) can't be
 * told from one that only has no more to send, and a proxy that waited to find out would keep paying
 * for the provider's tokens (nginx aborts its upstream call the same way). Returns the unsubscribe.
 */
function leaveOnHalfClose(request: IncomingMessage, response: ServerResponse): () => void {
  if (!request.url?.startsWith(`${PROXY_BASE}/`)) return () => undefined;
  const leave = () => response.destroy();
  if (request.socket.readableEnded) {
    leave();
    return () => undefined;
  }
  request.socket.once('end', leave);
  return () => request.socket.off('end', leave);
}
