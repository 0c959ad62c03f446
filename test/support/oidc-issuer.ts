import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { untilPrinted } from './patience';

const ROOT = resolve(__dirname, '../..');

export interface Issuer {
  url: string;
  clientId: string;
  clientSecret: string;
  /** The server environment that signs in with this issuer. */
  proxyEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** The people the tests sign in as, each in one identity-provider group. */
export const PEOPLE = { alice: ['proxy-admins'], bob: ['proxy-members'], carol: ['proxy-viewers'] } as const;

/**
 * A free port on 127.0.0.1, for a proxy whose callback address the issuer must know before it
 * starts. It is drawn below the kernel's range of ephemeral ports: a port from that range (what
 * `listen(0)` hands out) may be taken, in the seconds before the proxy listens, as the local end of
 * any outgoing connection on the machine, and a full test run makes thousands (one CI run lost the
 * race: "port already in use").
 */
export async function freePort(): Promise<number> {
  const lowest = 10_000;
  const ephemeralFrom = ephemeralPortsFrom();
  for (;;) {
    const port = lowest + Math.floor(Math.random() * (ephemeralFrom - lowest));
    if (await listensOn(port)) return port;
  }
}

/** The first port the kernel hands out for outgoing connections (Linux's default range starts at 32768). */
function ephemeralPortsFrom(): number {
  try {
    const [from] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(from) && from > 12_000) return from;
  } catch {
    // Not Linux: its default.
  }
  return 32_768;
}

/** Whether a server can listen on the port now (it is closed again at once). */
async function listensOn(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((done) => {
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => done(true));
  });
  if (listening) await new Promise((done) => server.close(done));
  return listening;
}

/**
 * Starts the real OpenID Connect issuer of scripts/local-oidc-issuer.mjs (`oidc-provider`, with its
 * own login page) on a free port, with one client whose callback is the proxy's on `proxyPort`.
 */
export async function startIssuer(proxyPort: number): Promise<Issuer> {
  const clientId = 'proxy-under-test';
  const clientSecret = `issuer-secret-${process.pid}-${proxyPort}`;
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'scripts/local-oidc-issuer.mjs')], {
    cwd: ROOT,
    env: {
      ...process.env,
      ISSUER_PORT: '0',
      ISSUER_REDIRECT_URI: `http://127.0.0.1:${proxyPort}/api/auth/callback`,
      ISSUER_CLIENT_ID: clientId,
      ISSUER_CLIENT_SECRET: clientSecret,
      ISSUER_PEOPLE: JSON.stringify(PEOPLE),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const [, url] = await untilPrinted(child, () => output, /issuer listening on (http:\/\/[\d.:]+)/, 'issuer');
  return {
    url,
    clientId,
    clientSecret,
    proxyEnv: {
      PORT: String(proxyPort),
      OIDC_ISSUER: url,
      OIDC_CLIENT_ID: clientId,
      OIDC_CLIENT_SECRET: clientSecret,
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
