import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { PROCESS_START_MS, untilPrinted } from '../support/patience';

const ROOT = resolve(__dirname, '../..');
const SERVER = join(ROOT, 'dist/local/server.mjs');

// Each test starts one to three real server processes; the first also starts DynamoDB Local on Java twice.
jest.setTimeout(2 * PROCESS_START_MS);
const TWO_JAVA_STARTS_MS = 3 * PROCESS_START_MS;

/** Servers still running when a test ends (it failed or timed out): stopped, so they don't slow the tests after it. */
const running = new Set<ChildProcess>();
afterEach(async () => {
  await Promise.all(
    [...running].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGKILL');
        await exited;
      }
    }),
  );
  running.clear();
});

/** Every folder and file under `dir` (itself as `.`) with its permission bits. */
function modesUnder(dir: string, base = dir): [string, number][] {
  const own: [string, number] = [relative(base, dir) || '.', statSync(dir).mode & 0o777];
  return [
    own,
    ...readdirSync(dir, { withFileTypes: true }).flatMap((e): [string, number][] =>
      e.isDirectory()
        ? modesUnder(join(dir, e.name), base)
        : [[relative(base, join(dir, e.name)), statSync(join(dir, e.name)).mode & 0o777]],
    ),
  ];
}

interface Running {
  output: () => string;
  url: Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

function startServer(env: NodeJS.ProcessEnv, args: string[] = []): Running {
  const child = spawn(process.execPath, [SERVER, ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout.on('data', (c) => (output += String(c)));
  child.stderr.on('data', (c) => (output += String(c)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = untilPrinted(child, () => output, /listening on (http:\/\/[\d.:]+)/, 'server').then(
    ([, found]) => found!,
  );
  url.catch(() => undefined);
  return {
    output: () => output,
    url,
    exited,
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

describe('npm start (the local server)', () => {
  it(
    'on first start with an empty DATA_DIR creates an account and prints its token, the admin key and the addresses; a restart keeps the data',
    async () => {
      const parent = mkdtempSync(join(tmpdir(), 'first-run-'));
      const dataDir = join(parent, 'data');
      try {
        // DYNAMODB_ENDPOINT unset: the server starts its own DynamoDB Local with files under DATA_DIR.
        const env = { DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '', ADMIN_KEY: '', TABLE_PREFIX: '' };
        const first = startServer(env);
        const url = await first.url;
        const printed = first.output();
        const token = /proxy token:\s+(sk-proxy-\S+)/.exec(printed)?.[1];
        const adminKey = /admin key:\s+(\S+)/.exec(printed)?.[1];
        expect(token).toMatch(/^sk-proxy-/);
        expect(adminKey).toBeTruthy();
        expect(printed).toContain(`dashboard:        ${url}/`);
        expect(printed).toContain(`${url}/api/proxy`);
        expect(statSync(join(dataDir, 'admin.key')).mode & 0o077).toBe(0);
        expect(existsSync(join(dataDir, 'dynamodb'))).toBe(true);

        // The printed token works for the management API; the admin key for the admin API.
        const keys = await fetch(`${url}/api/keys`, { headers: { authorization: `Bearer ${token}` } });
        expect(keys.status).toBe(200);
        const save = await fetch(`${url}/api/keys/prov-b`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ key: 'first-run-provider-key-1234' }),
        });
        expect(save.status).toBe(200);
        const admin = await fetch(`${url}/api/admin/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}` },
          body: '{}',
        });
        expect(admin.status).toBe(201);
        expect(await first.stop('SIGINT')).toBe(0);
        expect(first.output()).toContain('stopped');
        // Keys, the store's .db files, checkpoints: nothing in DATA_DIR is readable by anyone but its owner.
        expect(modesUnder(dataDir).filter(([, mode]) => mode & 0o077)).toEqual([]);
        expect(modesUnder(dataDir)).toEqual(
          expect.arrayContaining([
            ['.', 0o700],
            ['admin.key', 0o600],
            ['local-master.key', 0o600],
          ]),
        );
        expect(modesUnder(dataDir).some(([name, mode]) => /^dynamodb\/.*\.db$/.test(name) && mode === 0o600)).toBe(
          true,
        );

        // What an earlier version left readable is made private again on the next start.
        chmodSync(dataDir, 0o755);
        chmodSync(join(dataDir, 'first-account.json'), 0o644);
        const second = startServer(env);
        const url2 = await second.url;
        expect(second.output()).not.toMatch(/sk-proxy-/);
        expect(second.output()).not.toContain(adminKey);
        expect(second.output()).toContain('`npm start -- --new-token` prints a fresh one');
        const after = await fetch(`${url2}/api/keys`, { headers: { authorization: `Bearer ${token}` } });
        expect((await after.json()).keys).toEqual([expect.objectContaining({ provider: 'prov-b', hint: '…1234' })]);
        expect(readFileSync(join(dataDir, 'admin.key'), 'utf8').trim()).toBe(adminKey);
        expect(await second.stop('SIGTERM')).toBe(0);
        expect(modesUnder(dataDir).filter(([, mode]) => mode & 0o077)).toEqual([]);
      } finally {
        rmSync(parent, { recursive: true, force: true });
      }
    },
    TWO_JAVA_STARTS_MS,
  );

  it('without Java says so in one clear line and exits', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'no-java-'));
    const dataDir = join(parent, 'data');
    try {
      const server = startServer({ DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '', PATH: '/nonexistent' });
      expect(await server.exited).toBe(1);
      const lines = server.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^Java was not found/);
      expect(lines[0]).toContain('DYNAMODB_ENDPOINT');
      // No folder left behind: the next start is a first start.
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('with an upstream override that is not an http(s) URL says so in one line naming the variable and exits', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bad-upstream-'));
    try {
      const server = startServer({ DATA_DIR: dataDir, UPSTREAM_BASE_URL_PROV_B: 'api.openai.com/v1' });
      expect(await server.exited).toBe(1);
      const lines = server.output().trim().split('\n');
      expect(lines).toEqual([
        expect.stringMatching(/^Invalid configuration: UPSTREAM_BASE_URL_PROV_B: expected an http\(s\) URL$/),
      ]);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('with DYNAMODB_ENDPOINT uses that store instead of starting its own', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'endpoint-'));
    try {
      const server = startServer({
        DATA_DIR: dataDir,
        DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
        TABLE_PREFIX: `ep${Date.now()}-`,
      });
      await server.url;
      expect(server.output()).toContain(`DynamoDB at ${process.env.DYNAMODB_ENDPOINT}`);
      expect(existsSync(join(dataDir, 'dynamodb'))).toBe(false);
      expect(await server.stop()).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('on a busy port says so in one line naming PORT and creates nothing; the next start on a free port prints a working token', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'busy-port-'));
    const dataDir = join(parent, 'data');
    const squatter = createServer();
    await new Promise<void>((done) => squatter.listen(0, '127.0.0.1', done));
    const busy = (squatter.address() as { port: number }).port;
    try {
      const env = {
        DATA_DIR: dataDir,
        DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
        ADMIN_KEY: '',
        TABLE_PREFIX: `bp${Date.now()}-`,
        HOST: '127.0.0.1',
      };
      const first = startServer({ ...env, PORT: String(busy) });
      expect(await first.exited).toBe(1);
      const lines = first.output().trim().split('\n');
      expect(lines).toEqual([
        expect.stringMatching(new RegExp(`^Port ${busy} on 127\\.0\\.0\\.1 is already in use.*PORT`)),
      ]);
      // Bound first: no admin key, no account, no store files, not even the folder, for a start that could not serve.
      expect(existsSync(dataDir)).toBe(false);

      const second = startServer({ ...env, PORT: '0' });
      const url = await second.url;
      const token = /proxy token:\s+(sk-proxy-\S+)/.exec(second.output())?.[1];
      expect(token).toBeDefined();
      expect(/admin key:\s+(admin-\S+)/.exec(second.output())?.[1]).toBe(
        readFileSync(join(dataDir, 'admin.key'), 'utf8').trim(),
      );
      expect((await fetch(`${url}/api/keys`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect(await second.stop('SIGTERM')).toBe(0);
    } finally {
      squatter.close();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('shows a fresh token for the first account when the start that made it stopped before showing it, and on --new-token', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'new-token-'));
    try {
      const env = {
        DATA_DIR: dataDir,
        DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
        ADMIN_KEY: '',
        TABLE_PREFIX: `nt${Date.now()}-`,
      };
      const first = startServer(env);
      await first.url;
      const accountId = /first account:\s+(\S+)/.exec(first.output())?.[1];
      expect(await first.stop('SIGTERM')).toBe(0);

      // A crash between creating the account and printing the banner leaves the marker unconfirmed.
      const marker = join(dataDir, 'first-account.json');
      writeFileSync(marker, JSON.stringify({ ...JSON.parse(readFileSync(marker, 'utf8')), token_shown: false }));
      const second = startServer(env);
      const url = await second.url;
      expect(second.output()).toContain(`first account:    ${accountId}`);
      expect(second.output()).toContain('the earlier start stopped before showing one');
      const recovered = /proxy token:\s+(sk-proxy-\S+)/.exec(second.output())![1]!;
      expect((await fetch(`${url}/api/keys`, { headers: { authorization: `Bearer ${recovered}` } })).status).toBe(200);
      expect(await second.stop('SIGTERM')).toBe(0);

      const third = startServer(env, ['--new-token']);
      const url3 = await third.url;
      const fresh = /proxy token:\s+(sk-proxy-\S+)/.exec(third.output())![1]!;
      expect(fresh).not.toBe(recovered);
      expect(fresh.startsWith(`sk-proxy-${accountId}_`)).toBe(true);
      for (const token of [fresh, recovered])
        expect((await fetch(`${url3}/api/keys`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect(await third.stop('SIGTERM')).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('lists the active upstream overrides in the start banner, as full endpoint URLs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'overrides-'));
    try {
      const server = startServer({
        DATA_DIR: dataDir,
        DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
        TABLE_PREFIX: `ov${Date.now()}-`,
        UPSTREAM_BASE_URL_PROV_A: '',
        UPSTREAM_BASE_URL_PROV_B: 'http://127.0.0.1:9/v1',
        UPSTREAM_BASE_URL_PROV_C: '',
        UPSTREAM_BASE_URL_PROV_D: '',
        UPSTREAM_BASE_URL_PROV_E: '',
      });
      await server.url;
      expect(server.output()).toContain(
        'upstream prov-b:  http://127.0.0.1:9/v1/chat/completions   (UPSTREAM_BASE_URL_PROV_B)',
      );
      expect(server.output()).not.toContain('upstream prov-a');
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
