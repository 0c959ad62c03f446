import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lambda/config';
import { buildDeps, type Deps } from '../../lambda/deps';
import { toFunctionUrlEvent } from '../../lambda/local/function-url-event';
import { installLambdaShim } from '../../lambda/local/lambda-shim';
import type { Logger } from '../../lambda/logger';
import { createProxyHandler } from '../../lambda/proxy-handler';
import { PROVIDER_IDS } from '../../lambda/providers/catalog';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { createTestTables } from './tables';

/**
 * The proxy's handler served from the test's own process, over DynamoDB Local and fake providers,
 * built as the local server builds it (in-flight answers shared). What a test gains over the built
 * server: it can wait for the server's own events instead of for time. `settled()` resolves once
 * every row, spend and cache entry that requests so far set in motion is stored (or given up), so
 * "nothing was stored" is read after the store had every chance to store it.
 */
export interface InProcessProxy {
  /** `http://127.0.0.1:<port>/api/proxy` */
  proxyBase: string;
  deps: Deps;
  fakes: AllFakes;
  /** The proxy token of an account made through the admin API, with a stored key for every provider. */
  token: string;
  /** Another such account; resolves with its proxy token. */
  createAccount(name: string): Promise<string>;
  /** Log lines the handler wrote, as `level message`. */
  logged: string[];
  /** The background work (rows, spends, cache commits) of every request so far has finished. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export interface InProcessOptions {
  /** Settings, as the environment would give them. */
  env?: Record<string, string>;
  /** The proxy's clock (epoch ms), in place of the wall clock: rate-limit windows, budget periods, cache expiry. */
  now?: () => number;
}

export async function startInProcessProxy(options: InProcessOptions = {}): Promise<InProcessProxy> {
  const fakes = await startAllFakes();
  const tables = await createTestTables();
  const dataDir = mkdtempSync(join(tmpdir(), 'in-process-proxy-'));
  const adminKey = `admin-${randomBytes(16).toString('hex')}`;
  const logged: string[] = [];
  const log: Logger = {
    info: (message) => void logged.push(`info ${message}`),
    warn: (message) => void logged.push(`warn ${message}`),
    error: (message) => void logged.push(`error ${message}`),
  };
  const config = loadConfig({ ...fakes.env, DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT, TABLE_PREFIX: tables.prefix, DATA_DIR: dataDir, ADMIN_KEY: adminKey, ...options.env });
  const deps = buildDeps(config, log, { shareInFlightAnswers: true });
  if (options.now) deps.now = options.now;
  installLambdaShim();
  const handler = createProxyHandler(deps) as unknown as (event: unknown, response: ServerResponse, context: object) => Promise<void>;
  const server = createServer((request, response) => {
    void toFunctionUrlEvent(request, response).then((event) => handler(event, response, { awsRequestId: event.requestContext.requestId }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const api = async (path: string, method: string, bearer: string, body: unknown) => {
    const response = await fetch(url + path, { method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const createAccount = async (name: string) => {
    const { token } = (await api('/api/admin/accounts', 'POST', adminKey, { name })) as { token: string };
    for (const provider of PROVIDER_IDS) await api(`/api/keys/${provider}`, 'PUT', token, { key: `${provider}-key-${randomBytes(12).toString('hex')}` });
    return token;
  };
  const token = await createAccount('in-process');

  return {
    proxyBase: `${url}/api/proxy`,
    deps,
    fakes,
    token,
    createAccount,
    logged,
    settled: () => deps.background.drain(),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await deps.background.drain();
      await fakes.close();
      tables.clients.raw.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
