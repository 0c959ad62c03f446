import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../config';
import { JavaMissingError, startDynamoDbLocal } from './dynamodb-local';
import { firstRunAccount, localAdminKey } from './first-run';
import { toFunctionUrlEvent } from './function-url-event';
import { installLambdaShim } from './lambda-shim';
import { describeError } from '../logger';
import { VERSION } from '../version';

/**
 * `npm start`: the Lambda handler behind a Node HTTP server. Each request
 * becomes a function URL event; the handler streams its answer straight into
 * the Node response, exactly as it streams into Lambda's response stream.
 */
let stopDynamo: (() => Promise<void>) | undefined;

async function main(): Promise<void> {
  const config = loadConfig();
  mkdirSync(config.dataDir, { recursive: true });
  // The SDK versions are pinned in package-lock.json; its notice about future releases needing Node 22 is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  if (!process.env.DYNAMODB_ENDPOINT) {
    const local = await startDynamoDbLocal(config.dataDir);
    process.env.DYNAMODB_ENDPOINT = local.endpoint;
    stopDynamo = local.stop;
  }
  const admin = localAdminKey(config.dataDir, process.env.ADMIN_KEY);
  process.env.ADMIN_KEY = admin.key;

  // The handler module builds its dependencies from the environment when it loads, so it loads last.
  installLambdaShim();
  const { handler, deps } = await import('../handler');
  const { ensureTables } = await import('../store/dynamodb/create-tables');
  const { createDynamoClients } = await import('../store/dynamodb/client');
  const { FileRowSpool } = await import('../store/row-spool');
  await ensureTables(createDynamoClients({ region: deps.config.region, endpoint: deps.config.dynamoEndpoint }).raw, deps.config.tables);
  if (deps.rowSpool instanceof FileRowSpool) deps.rowSpool.startReplay((row) => deps.rowWriter.writeOnce(row));
  const firstAccount = await firstRunAccount(deps.config.dataDir, deps.accounts);

  let inFlight = 0;
  let idle: (() => void) | undefined;
  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    inFlight++;
    try {
      const event = await toFunctionUrlEvent(request);
      // A client that leaves before the provider answers stops the upstream call too.
      const clientGone = new AbortController();
      const abandoned = new Promise<void>((resolve) =>
        response.once('close', () => {
          if (response.writableFinished) return;
          clientGone.abort();
          resolve();
        }),
      );
      const handled = (handler as unknown as (e: unknown, s: ServerResponse, c: object) => Promise<void>)(event, response, { awsRequestId: event.requestContext.requestId, clientGone: clientGone.signal });
      // Writing to a response whose client left may never settle; its rows are still tracked by deps.background.
      await Promise.race([handled, abandoned.then(() => new Promise((resolve) => setTimeout(resolve, 5_000).unref()))]);
    } catch (error) {
      if (!response.destroyed) deps.log.warn('local adapter: request ended with an error', describeError(error));
      // The response has started (or the client left); all that remains is to close it.
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"Internal error","type":"server_error"}}');
      else response.destroy();
    } finally {
      inFlight--;
      if (inFlight === 0) idle?.();
    }
  };
  const server = createServer((request, response) => void serve(request, response));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(config.port, config.host, done);
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;

  const lines = [
    `ai-usage-proxy ${VERSION} listening on ${base}`,
    `  dashboard:        ${base}/`,
    `  proxy base:       ${base}/api/proxy   (Anthropic SDK baseURL; OpenAI SDK: ${base}/api/proxy/prov-b/v1)`,
    `  data directory:   ${config.dataDir}${stopDynamo ? ' (DynamoDB Local inside)' : ` (DynamoDB at ${process.env.DYNAMODB_ENDPOINT})`}`,
  ];
  if (admin.generated) lines.push(`  admin key:        ${admin.key}   (saved in ${config.dataDir}/admin.key)`);
  if (firstAccount) {
    lines.push(`  first account:    ${firstAccount.accountId}`);
    lines.push(`  proxy token:      ${firstAccount.token}   (shown once: sign in to the dashboard with it)`);
  }
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: finishing ${inFlight} request(s) in flight…\n`);
    server.close();
    server.closeIdleConnections();
    if (inFlight > 0) await new Promise<void>((done) => (idle = done));
    await deps.background.drain();
    await stopDynamo?.();
    process.stdout.write('stopped\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch(async (error) => {
  const known = error instanceof JavaMissingError || (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
  process.stderr.write(`${known ? (error as Error).message : `Failed to start: ${(error as Error).stack ?? error}`}\n`);
  await stopDynamo?.();
  process.exit(1);
});
