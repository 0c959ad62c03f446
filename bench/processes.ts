/**
 * The processes of a run, all on 127.0.0.1: this proxy's local server, the bare pipe, Portkey's
 * gateway, the load generator; and what the kernel says each one used (/proc, Linux only).
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../lambda/local/dynamodb-local';
import type { LoadJob, LoadResult } from './load';

export const ROOT = process.cwd();
export const LAMBDA_BUNDLE = join(ROOT, 'dist', 'lambda', 'handler.mjs');
const SERVER_BUNDLE = join(ROOT, 'dist', 'local', 'server.mjs');
const PORTKEY_ENTRY = join(ROOT, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');

/** The Node flags `npm start` gives the local server, so the measured server runs as a user's does. */
function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts
    .start;
  const match = /node((?:\s+--\S+)*)\s+dist\/local\/server\.mjs/.exec(start);
  return match ? match[1]!.trim().split(/\s+/).filter(Boolean) : [];
}

/**
 * Loaded before Portkey's server: it listens on every interface with no option for a host, so a
 * listen() without one is pinned to 127.0.0.1; and its streaming path fails with "TypeError:
 * immutable" under recent @hono/node-server (Portkey issues #1389 and #1550), so an SSE answer is
 * re-wrapped once with a mutable copy of its headers. JSON answers are untouched.
 */
const PORTKEY_PRELOAD =
  'data:text/javascript,' +
  encodeURIComponent(`import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\\d+$/.test(args[0]))) {
    if (typeof args[1] !== 'string') args.splice(1, typeof args[1] === 'undefined' ? 1 : 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object' && !args[0].path && !args[0].host) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};
const NativeResponse = globalThis.Response;
const nativeFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const response = await nativeFetch(...args);
  if (!String(response.headers.get('content-type')).includes('text/event-stream')) return response;
  return new NativeResponse(response.body, { status: response.status, statusText: response.statusText, headers: new Headers(response.headers) });
};`);

export interface Child {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** Spawns a Node process and resolves once its output matches `ready` (its URL in group 1, or `url`). */
async function startChild(
  name: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  url?: string,
): Promise<Child> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString('utf8')).slice(-10_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const found = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start:\n${output}`)), 120_000);
    const check = () => {
      const match = ready.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      done(url ?? match[1]!);
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => fail(new Error(`${name} exited with ${code}:\n${output}`)));
  });
  return {
    pid: child.pid!,
    url: found,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => (clearTimeout(force), done()));
        child.kill('SIGTERM');
      }),
  };
}

export interface Proxy extends Child {
  /** Its tables' prefix: the store round trip is measured on one of them. */
  tablePrefix: string;
  token: string;
  /** More tokens of the same account, for traffic that arrives from many callers. */
  tokens: string[];
}

/** Tokens of the many-tokens contender: traffic as it arrives from many services, each with its own. */
export const MANY_TOKENS = 32;

/** The local server (`npm start`'s bundle and flags) with an account and a stored key for prov-b. */
export async function startProxy(upstream: string, dynamoEndpoint: string): Promise<Proxy> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-proxy-'));
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
  const tablePrefix = `bench${randomBytes(4).toString('hex')}-`;
  const child = await startChild(
    'proxy',
    [...startFlags(), SERVER_BUNDLE],
    {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_KEY: adminKey,
      TABLE_PREFIX: tablePrefix,
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      // In AWS another function folds the usage stream into rollups: the measured process serves requests only.
      STATS_CONSUMER: 'off',
      UPSTREAM_BASE_URL_PROV_B: `${upstream}/v1`,
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    },
    /listening on (http:\/\/[\d.:]+)/,
  );
  const api = async (path: string, method: string, bearer: string, body: unknown) => {
    const response = await fetch(child.url + path, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const token = String((await api('/api/admin/accounts', 'POST', adminKey, { name: 'bench' })).token);
  await api('/api/keys/prov-b', 'PUT', token, { key: `sk-bench-stored-${randomBytes(12).toString('hex')}` });
  const tokens: string[] = [];
  for (let i = 0; i < MANY_TOKENS; i++)
    tokens.push(String((await api('/api/tokens', 'POST', token, { name: `service-${i}` })).token));
  return {
    ...child,
    tablePrefix,
    token,
    tokens,
    stop: () => child.stop().then(() => rmSync(dataDir, { recursive: true, force: true })),
  };
}

export function startPipe(upstream: string): Promise<Child> {
  return startChild(
    'pipe',
    // The same Node flags as the proxy's: each contender's heap is sized alike.
    [...startFlags(), join(ROOT, 'bench', 'pipe.ts')],
    { TARGET: upstream, PORT: '0' },
    /listening on (http:\/\/[\d.:]+)/,
  );
}

export async function startPortkey(): Promise<Child> {
  const port = await freePort();
  return startChild(
    'portkey',
    [...startFlags(), '--import', PORTKEY_PRELOAD, PORTKEY_ENTRY, `--port=${port}`, '--headless'],
    {},
    /Ready for connections/,
    `http://127.0.0.1:${port}`,
  );
}

export interface Load {
  pid: number;
  run(job: LoadJob): Promise<LoadResult>;
  stop(): void;
}

export async function startLoad(): Promise<Load> {
  const child = fork(join(ROOT, 'bench', 'load.ts'), [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
  });
  return {
    pid: child.pid!,
    run: (job) =>
      new Promise((resolve, reject) => {
        child.once('message', (reply: { ok: true; result: LoadResult } | { ok: false; error: string }) =>
          reply.ok ? resolve(reply.result) : reject(new Error(reply.error)),
        );
        child.send(job);
      }),
    stop: () => void child.kill('SIGTERM'),
  };
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User + system CPU time of a process so far, in ms (the kernel counts in ticks of 1/CLK_TCK s). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** The highest resident set size the process has had so far (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) / 1024;
}

/** The java process serving DynamoDB Local on `port`, found by its command line. */
export function javaPid(port: string): number {
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.some((arg) => arg.endsWith('DynamoDBLocal.jar')) && args[args.indexOf('-port') + 1] === port)
        return Number(entry);
    } catch {
      // Processes come and go while the list is read.
    }
  }
  throw new Error(`no DynamoDB Local process on port ${port}`);
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** The commit measured, and whether the working tree differed from it when the run started. */
export function source(): { commit: string; clean: boolean } {
  return { commit: git('rev-parse', 'HEAD'), clean: git('status', '--porcelain') === '' };
}
