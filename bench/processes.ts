/**
 * Starting and stopping the contenders' processes: this proxy's local server,
 * the bare pipe proxy and Portkey's gateway. Every one listens on 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = process.cwd();
export const SERVER_BUNDLE = join(ROOT, 'dist', 'local', 'server.mjs');
export const LAMBDA_BUNDLE = join(ROOT, 'dist', 'lambda', 'handler.mjs');
/**
 * The Node flags `npm start` gives the local server, read from package.json's start script, so that
 * every measured server runs as a user's does (the flags bound V8's heap: README, "Memory").
 */
export function localServerNodeFlags(startScript: string): string[] {
  const match = /(?:^|&&\s*)node((?:\s+--\S+)*)\s+dist\/local\/server\.mjs\b/.exec(startScript);
  if (!match) throw new Error(`package.json's start script does not run dist/local/server.mjs: ${startScript}`);
  return match[1]!.trim().split(/\s+/).filter(Boolean);
}

export const START_SCRIPT = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
export const LOCAL_SERVER_NODE_FLAGS = localServerNodeFlags(START_SCRIPT);

const PORTKEY_ENTRY = join(ROOT, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');

/**
 * Two fixes, loaded before Portkey's server:
 * - it listens on every interface and has no option for a host, so any listen()
 *   without a host is pinned to 127.0.0.1;
 * - with @hono/node-server >= 1.14.3 its streaming path fails with "TypeError:
 *   immutable" (Portkey issues #1389 and #1550: the lightweight Response keeps the
 *   fetch Response's read-only headers), so an SSE answer from upstream is
 *   re-wrapped once with a mutable copy of its headers. JSON answers are untouched.
 */
const PORTKEY_PRELOAD =
  'data:text/javascript,' +
  encodeURIComponent(`import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string' && /^\\d+$/.test(args[0])) {
    if (typeof args[1] !== 'string') args.splice(1, typeof args[1] === 'undefined' ? 1 : 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object' && !args[0].path && !args[0].host) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
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
  name: string;
  pid: number;
  url: string;
  /** The last part of what the process printed. */
  output(): string;
  /** False once the process has exited, by itself or not. */
  alive(): boolean;
  /** How it exited ("code 1", "signal SIGKILL"), once it has. */
  exit(): string | undefined;
  stop(): Promise<void>;
}

import { freePort } from '../lambda/local/dynamodb-local';

export { freePort };

/** Spawns a process and resolves once it prints a line matching `ready` (its URL in group 1, or `url`). */
export async function startChild(options: {
  name: string;
  args: string[];
  env?: Record<string, string>;
  ready: RegExp;
  url?: string;
  timeoutMs?: number;
}): Promise<Child> {
  const child: ChildProcess = spawn(process.execPath, options.args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Keep only the tail: a server that logs per request must not grow this process.
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${options.name} did not start in time:\n${output}`)), options.timeoutMs ?? 60_000);
    const check = () => {
      const match = options.ready.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      done(options.url ?? match[1]!);
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${options.name} exited with ${code}:\n${output}`));
    });
  });
  return {
    name: options.name,
    pid: child.pid!,
    url,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    exit: () => (child.signalCode !== null ? `signal ${child.signalCode}` : child.exitCode !== null ? `code ${child.exitCode}` : undefined),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(force);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}

export interface ProxyInstance extends Child {
  adminKey: string;
  token: string;
  /** The provider key saved for prov-a and prov-b in stored mode. */
  storedKey: string;
  /** Prefix of this instance's DynamoDB tables (`<prefix>accounts`, …). */
  tablePrefix: string;
}

/**
 * This proxy's local server on an existing DynamoDB endpoint, with an account and saved keys; started
 * with `npm start`'s Node flags, then `nodeArgs`.
 */
export async function startProxyServer(options: {
  upstreamOrigin: string;
  dynamoEndpoint: string;
  /** Instead of `npm start`'s flags (to compare settings). */
  nodeFlags?: string[];
  nodeArgs?: string[];
  entry?: string;
  name?: string;
}): Promise<ProxyInstance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-proxy-'));
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
  const tablePrefix = `bench${randomBytes(4).toString('hex')}-`;
  const upstream = options.upstreamOrigin;
  const child = await startChild({
    name: options.name ?? 'proxy',
    args: [...(options.nodeFlags ?? LOCAL_SERVER_NODE_FLAGS), ...(options.nodeArgs ?? []), options.entry ?? SERVER_BUNDLE],
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_KEY: adminKey,
      TABLE_PREFIX: tablePrefix,
      DYNAMODB_ENDPOINT: options.dynamoEndpoint,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      // In AWS the rollups are folded from the usage stream by another function, not by the one
      // serving requests: the measured process serves requests only (its CPU and store calls are the request's).
      STATS_CONSUMER: 'off',
      UPSTREAM_BASE_URL_PROV_A: upstream,
      UPSTREAM_BASE_URL_PROV_B: `${upstream}/v1`,
      UPSTREAM_BASE_URL_PROV_C: `${upstream}/v1`,
      UPSTREAM_BASE_URL_PROV_D: `${upstream}/v1`,
      UPSTREAM_BASE_URL_PROV_E: `${upstream}/v1`,
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    },
    ready: /listening on (http:\/\/[\d.:]+)/,
  });
  const api = async (path: string, method: string, bearer: string, body: unknown) => {
    const response = await fetch(child.url + path, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const account = await api('/api/admin/accounts', 'POST', adminKey, { name: 'bench' });
  const token = String(account.token);
  const storedKey = `sk-bench-stored-${randomBytes(12).toString('hex')}`;
  for (const provider of ['prov-a', 'prov-b']) await api(`/api/keys/${provider}`, 'PUT', token, { key: storedKey });
  return {
    ...child,
    adminKey,
    token,
    storedKey,
    tablePrefix,
    async stop() {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The bare pipe proxy, bundled by the orchestrator so that it runs on plain Node with no loader. */
export function startPipeProxy(script: string, upstreamOrigin: string): Promise<Child> {
  return startChild({ name: 'bare pipe', args: [script], env: { TARGET: upstreamOrigin, PORT: '0' }, ready: /listening on (http:\/\/[\d.:]+)/ });
}

export async function startPortkey(): Promise<Child> {
  const port = await freePort();
  return startChild({
    name: 'portkey',
    args: ['--import', PORTKEY_PRELOAD, resolve(PORTKEY_ENTRY), `--port=${port}`, '--headless'],
    ready: /Ready for connections/,
    url: `http://127.0.0.1:${port}`,
  });
}
