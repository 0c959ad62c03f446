import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lambda/wiring/config';
import { buildDeps, type Deps } from '../../lambda/wiring/deps';
import { toFunctionUrlEvent } from '../../lambda/local/function-url-event';
import { installLambdaShim } from '../../lambda/local/lambda-shim';
import type { Logger } from '../../lambda/base/logger';
import { PROVIDER_IDS } from '../../lambda/providers/catalog';
import { createProxyHandler } from '../../lambda/wiring/proxy-handler';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { createTestTables } from './tables';
import { NO_SIGN_IN_HOLD } from './proxy-server';

/**
 * The proxy's handler served from the test's own process, over DynamoDB Local and fake providers,
 * built as the local server builds it (in-flight answers shared). What a test gains over the built
 * server: it can wait for the server's own events instead of for time. `settled()` resolves once
 * every row, spend and cache entry that requests so far set in motion is stored (or given up), so
 * "nothing was stored" is read after the store had every chance to store it; and the proxy's clock
 * can be held still.
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
  /** A management API call, with the admin key unless a token is given. */
  api(path: string, init?: { token?: string; method?: string; body?: unknown }): Promise<Response>;
  /** Log lines the handler wrote (JSON, its fields included). */
  logged: string[];
  /** Secrets the test used; `close()` fails if a log line holds any of them. */
  secrets: Set<string>;
  /** The background work (rows, spends, cache commits) of every request so far has finished. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export interface InProcessOptions {
  /** Settings, as the environment would give them. */
  env?: Record<string, string>;
  /** The proxy's clock (epoch ms), in place of the wall clock: rate-limit windows, budget periods, cache expiry. */
  now?: () => number;
  /** Another instance on the same store: same tables, same local key file, same fake providers. */
  sameStoreAs?: InProcessProxy;
  /** Handed to the handler as Lambda hands it `context.getRemainingTimeInMillis` (the local server sets no time limit). */
  remainingTimeMs?: () => number;
}

/** What a second instance shares with the first. */
const shared = new WeakMap<
  InProcessProxy,
  { fakes: AllFakes; tablePrefix: string; dataDir: string; adminKey: string }
>();

export async function startInProcessProxy(options: InProcessOptions = {}): Promise<InProcessProxy> {
  const first = options.sameStoreAs && shared.get(options.sameStoreAs);
  const fakes = first?.fakes ?? (await startAllFakes());
  const tables = first ? undefined : await createTestTables();
  const tablePrefix = first?.tablePrefix ?? tables!.prefix;
  const dataDir = first?.dataDir ?? mkdtempSync(join(tmpdir(), 'in-process-proxy-'));
  const adminKey = first?.adminKey ?? `admin-${randomBytes(16).toString('hex')}`;
  const logged: string[] = [];
  const line = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void logged.push(JSON.stringify({ level, message, ...fields }));
  const log: Logger = { info: line('info'), warn: line('warn'), error: line('error') };
  const config = loadConfig({
    ...fakes.env,
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
    TABLE_PREFIX: tablePrefix,
    DATA_DIR: dataDir,
    ADMIN_KEY: adminKey,
    ...NO_SIGN_IN_HOLD,
    ...options.env,
  });
  const deps = buildDeps(config, log, { shareInFlightAnswers: true });
  if (options.now) deps.now = options.now;
  installLambdaShim();
  const handler = createProxyHandler(deps) as unknown as (
    event: unknown,
    response: ServerResponse,
    context: object,
  ) => Promise<void>;
  // As the local server does (lambda/local/server.ts): a request that fails after its answer began can only be cut.
  const server = createServer((request, response) => {
    toFunctionUrlEvent(request, response)
      .then((event) =>
        handler(event, response, {
          awsRequestId: event.requestContext.requestId,
          getRemainingTimeInMillis: options.remainingTimeMs,
        }),
      )
      .catch(() => response.destroy());
  });
  // Longer than a client's idle keep-alive, so the server never closes a socket the client is about to reuse.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // One set for the instances of a store: a token made on one is used on the other.
  const secrets = options.sameStoreAs?.secrets ?? new Set<string>([adminKey]);
  const api: InProcessProxy['api'] = (path, init = {}) =>
    fetch(url + path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${init.token ?? adminKey}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const call = async (path: string, method: string, bearer: string, body: unknown) => {
    const response = await api(path, { token: bearer, method, body });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const createAccount = async (name: string) => {
    const { token } = (await call('/api/admin/accounts', 'POST', adminKey, { name })) as { token: string };
    secrets.add(token);
    for (const provider of PROVIDER_IDS) {
      const key = `${provider}-key-${randomBytes(12).toString('hex')}`;
      secrets.add(key);
      await call(`/api/keys/${provider}`, 'PUT', token, { key });
    }
    return token;
  };
  const token = await createAccount('in-process');

  const proxy: InProcessProxy = {
    proxyBase: `${url}/api/proxy`,
    deps,
    fakes,
    token,
    createAccount,
    api,
    logged,
    secrets,
    settled: () => deps.background.drain(),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await deps.background.drain();
      if (!first) {
        await fakes.close();
        tables?.clients.raw.destroy();
        rmSync(dataDir, { recursive: true, force: true });
      }
      const leaked = [...secrets].filter((secret) => logged.some((entry) => entry.includes(secret)));
      if (leaked.length) throw new Error(`The proxy logged ${leaked.length} secret(s) it must never log`);
    },
  };
  shared.set(proxy, { fakes, tablePrefix, dataDir, adminKey });
  return proxy;
}
