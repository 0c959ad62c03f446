import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startAllFakes, type AllFakes, type ProviderId } from '../fakes/start-fakes';
import { eventually, untilPrinted } from './patience';

const ROOT = resolve(__dirname, '../..');
const SERVER = join(ROOT, 'dist/local/server.mjs');

export interface Account {
  accountId: string;
  token: string;
  tokenId: string;
}

export interface ProxyServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The server process's id (to read its memory and CPU use). */
  pid: number;
  /** Its DATA_DIR (the master key file lives there). */
  dataDir: string;
  /** `${url}/api/proxy` */
  proxyBase: string;
  adminKey: string;
  fakes: AllFakes;
  /** An account made through the admin API, with a stored key for every provider. */
  account: Account;
  /** Provider keys saved for `account`, by provider. */
  storedKeys: Record<ProviderId, string>;
  /** Everything the server printed (stdout and stderr). */
  output(): string;
  /** How many times the server has printed `text`: a test waiting for a new line counts before and after. */
  timesPrinted(text: string): number;
  /** Secrets the suite used; `stop()` fails if the server printed any of them. */
  secrets: Set<string>;
  createAccount(name?: string): Promise<Account>;
  saveKey(token: string, provider: ProviderId, key?: string): Promise<string>;
  api(path: string, init?: { method?: string; token?: string; body?: unknown }): Promise<Response>;
  /** Waits until /api/stats counts `count` requests (rows are written after responses end, then folded), then reads /api/logs (filtered by `query`) until it holds `count` rows. */
  waitForRows(token: string, count: number, query?: string): Promise<Array<Record<string, unknown>>>;
  /** Polls /api/logs until the rows of these request ids (x-proxy-request-id) exist. */
  rowsFor(token: string, ids: string[]): Promise<Array<Record<string, unknown>>>;
  /** Stops the server (SIGTERM) and fails if any secret appears in its output. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Added to the server's environment; `undefined` removes a variable (e.g. the fakes' AWS credentials). */
  env?: Record<string, string | undefined>;
  /** Reuse fakes across servers (e.g. two instances on one store). */
  fakes?: AllFakes;
  /** Share tables with another server. */
  tablePrefix?: string;
  /** Another server on the same tables: its master key file is copied, as two instances on one store must share it. */
  sharesKeysWith?: ProxyServer;
}

/**
 * Tests send many wrong credentials from 127.0.0.1 on purpose; held or throttled answers would only
 * make them slow or refused. test/security/failed-sign-ins.test.ts unsets these to prove the defaults.
 */
export const NO_SIGN_IN_HOLD = { FAILED_SIGN_IN_MAX_DELAY_MS: '0', FAILED_SIGN_INS_PER_MINUTE: '0' };

const PROVIDERS: ProviderId[] = ['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e'];

export const fakeProviderKey = (provider: ProviderId) => `${provider}-key-${randomBytes(12).toString('hex')}`;

/** Starts the built local server as its own process on the run's DynamoDB Local, with fake providers. */
export async function startProxy(options: StartOptions = {}): Promise<ProxyServer> {
  const fakes = options.fakes ?? (await startAllFakes());
  const ownsFakes = !options.fakes;
  const dataDir = mkdtempSync(join(tmpdir(), 'proxy-data-'));
  if (options.sharesKeysWith)
    copyFileSync(join(options.sharesKeysWith.dataDir, 'local-master.key'), join(dataDir, 'local-master.key'));
  const adminKey = options.env?.ADMIN_KEY ?? `admin-test-${randomBytes(16).toString('hex')}`;
  const child: ChildProcess = spawn(process.execPath, [SERVER], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...fakes.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_KEY: adminKey,
      TABLE_PREFIX: options.tablePrefix ?? `p${randomBytes(4).toString('hex')}-`,
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
      ...NO_SIGN_IN_HOLD,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));

  const [, url] = await untilPrinted(child, () => output, /listening on (http:\/\/[\d.:]+)/, 'proxy');
  // The first-run banner prints one token by design; it is the only one allowed in the output.
  const bannerToken = /proxy token:\s+(sk-proxy-\S+)/.exec(output)?.[1];

  // The AWS credentials the proxy signs Bedrock requests with never appear in its output either.
  const secrets = new Set<string>([fakes.bedrock.secrets.secretAccessKey, fakes.bedrock.secrets.sessionToken!]);
  const api: ProxyServer['api'] = (path, init = {}) =>
    fetch(url + path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${init.token ?? adminKey}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  const createAccount = async (name?: string): Promise<Account> => {
    const response = await api('/api/admin/accounts', { body: { name } });
    if (response.status !== 201) throw new Error(`account not created: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { account_id: string; token: string; token_id: string };
    secrets.add(body.token);
    return { accountId: body.account_id, token: body.token, tokenId: body.token_id };
  };
  const saveKey = async (token: string, provider: ProviderId, key = fakeProviderKey(provider)) => {
    secrets.add(key);
    const response = await api(`/api/keys/${provider}`, { method: 'PUT', token, body: { key } });
    if (response.status !== 200) throw new Error(`key not saved: ${response.status} ${await response.text()}`);
    return key;
  };

  const account = await createAccount('suite');
  const storedKeys = {} as Record<ProviderId, string>;
  for (const provider of PROVIDERS) storedKeys[provider] = await saveKey(account.token, provider);

  return {
    url,
    pid: child.pid!,
    dataDir,
    proxyBase: `${url}/api/proxy`,
    adminKey,
    fakes,
    account,
    storedKeys,
    secrets,
    output: () => output,
    timesPrinted: (text) => output.split(text).length - 1,
    createAccount,
    saveKey,
    api,
    async waitForRows(token, count, query = '') {
      // The overview's rollups are folded from the usage stream after the rows are written, so once
      // they count the rows, the rows are there: the overview is polled, the rows then read.
      await eventually(async () => {
        const stats = (await (await api('/api/stats', { token })).json()) as { totals?: { requests?: number } };
        return (stats.totals?.requests ?? 0) >= count ? true : undefined;
      });
      let items: Array<Record<string, unknown>> = [];
      await eventually(async () => {
        const response = await api(`/api/logs?limit=500${query ? `&${query}` : ''}`, { token });
        items = ((await response.json()) as { items?: Array<Record<string, unknown>> }).items ?? [];
        return items.length >= count ? items : undefined;
      });
      return items;
    },
    async rowsFor(token, ids) {
      let found = new Map<string, Record<string, unknown>>();
      await eventually(async () => {
        found = new Map<string, Record<string, unknown>>();
        let cursor: string | null = null;
        do {
          const response = await api(`/api/logs?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { token });
          const body = (await response.json()) as { items: Array<Record<string, unknown>>; next_cursor: string | null };
          for (const row of body.items ?? []) if (ids.includes(row.id as string)) found.set(row.id as string, row);
          cursor = found.size < ids.length ? body.next_cursor : null;
        } while (cursor);
        return found.size === ids.length ? true : undefined;
      });
      return ids.map((id) => found.get(id)!).filter(Boolean);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        await exited;
      }
      if (ownsFakes) await fakes.close();
      rmSync(dataDir, { recursive: true, force: true });
      const leaked = [...secrets].filter((secret) => secret !== bannerToken && output.includes(secret));
      mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
      writeFileSync(join(ROOT, 'test-artifacts', `server-output-${process.pid}-${Date.now()}.log`), output);
      if (leaked.length) throw new Error(`The server printed ${leaked.length} secret(s) it must never print`);
    },
  };
}
