/**
 * The composition root: importing the proxy's handler factory builds nothing and reads nothing
 * (the Lambda entry is what builds the clients, once per instance), and `createProxyHandler`
 * serves with whatever dependencies it is given.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../lambda/wiring/config';
import { buildDeps } from '../../lambda/wiring/deps';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { createTestTables } from '../support/tables';
import { EVENTUALLY_MS, eventually } from '../support/patience';

/** Lambda's streaming runtime, as far as a handler touches it: the prelude is kept beside the body. */
interface CapturedStream extends Writable {
  prelude?: { statusCode: number; headers: Record<string, string> };
  chunks: Buffer[];
}

function installRuntime(): void {
  (globalThis as { awslambda?: unknown }).awslambda = {
    streamifyResponse: <T>(handler: T): T => handler,
    HttpResponseStream: {
      from(stream: CapturedStream, prelude: CapturedStream['prelude']) {
        stream.prelude = prelude;
        return stream;
      },
    },
  };
}

function responseStream(): CapturedStream {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  }) as CapturedStream;
  stream.chunks = chunks;
  return stream;
}

/** A function URL event (payload format 2.0), as Lambda delivers it. */
function functionUrlEvent(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: 'abc.lambda-url.eu-west-1.on.aws', ...headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc',
      domainName: 'abc.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

type StreamingHandler = (event: unknown, stream: Writable, context: object) => Promise<void>;

async function invoke(handler: StreamingHandler, event: object) {
  const stream = responseStream();
  await handler(event, stream, { awsRequestId: 'test' });
  return {
    status: stream.prelude?.statusCode,
    headers: stream.prelude?.headers ?? {},
    body: Buffer.concat(stream.chunks).toString('utf8'),
  };
}

/** A stand-in for Secrets Manager's endpoint that counts the calls it gets. */
async function fakeSecretsManager(secret: string): Promise<{ server: Server; url: string; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      calls.push(`${request.headers['x-amz-target']} ${body}`);
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(
        JSON.stringify({
          ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin',
          Name: 'admin',
          SecretString: secret,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

let fakes: AllFakes;
let tables: Awaited<ReturnType<typeof createTestTables>>;
let dataDir: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  fakes = await startAllFakes();
  tables = await createTestTables();
  dataDir = mkdtempSync(join(tmpdir(), 'proxy-handler-'));
  installRuntime();
});

afterEach(() => {
  process.env = { ...savedEnv };
});

afterAll(async () => {
  await fakes.close();
  tables.clients.raw.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('importing the handler factory', () => {
  it('builds no client and reads no secret; the Lambda entry does both when it loads', async () => {
    const secrets = await fakeSecretsManager('an-admin-key-from-secrets-manager');
    try {
      process.env.ADMIN_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin';
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secrets.url;
      process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
      process.env.AWS_SECRET_ACCESS_KEY = 'secret-for-the-fake';
      process.env.DATA_DIR = dataDir;
      process.env.TABLE_PREFIX = tables.prefix;

      // Each import gets a fresh module registry; the spy watches that registry's Secrets Manager client.
      const importWatchingSecrets = <T extends object>(path: string): { module: T; reads: jest.SpyInstance } => {
        let loaded: { module: T; reads: jest.SpyInstance } | undefined;
        jest.isolateModules(() => {
          const { SecretsManagerClient } = jest.requireActual<typeof import('@aws-sdk/client-secrets-manager')>(
            '@aws-sdk/client-secrets-manager',
          );
          const reads = jest.spyOn(SecretsManagerClient.prototype, 'send');
          loaded = { module: jest.requireActual<T>(path), reads };
        });
        if (!loaded) throw new Error(`${path} did not load`);
        return loaded;
      };

      const factory = importWatchingSecrets<typeof import('../../lambda/wiring/proxy-handler')>(
        '../../lambda/wiring/proxy-handler',
      );
      expect(Object.keys(factory.module).sort()).toEqual(['PROXY_BASE', 'createProxyHandler', 'proxyPipeline']);
      expect(factory.reads).not.toHaveBeenCalled();

      // The entry builds its dependencies and starts reading the admin secret at once (cold start).
      const entry = importWatchingSecrets<typeof import('../../lambda/entry/handler')>('../../lambda/entry/handler');
      expect(typeof entry.module.handler).toBe('function');
      expect(entry.reads).toHaveBeenCalledTimes(1);
      await eventually(() => Promise.resolve(secrets.calls.length > 0 ? true : undefined), EVENTUALLY_MS, 10);
      expect(secrets.calls).toEqual([expect.stringMatching(/^secretsmanager\.GetSecretValue .*secret:admin/)]);
    } finally {
      secrets.server.close();
    }
  });

  it('needs no configuration: a bad environment stops only the Lambda entry, which parses it', () => {
    process.env.RATE_LIMIT_PER_MINUTE = 'many';
    expect(() =>
      jest.isolateModules(() => {
        jest.requireActual('../../lambda/wiring/proxy-handler');
      }),
    ).not.toThrow();
    expect(() =>
      jest.isolateModules(() => {
        jest.requireActual('../../lambda/entry/handler');
      }),
    ).toThrow(/Invalid configuration: RATE_LIMIT_PER_MINUTE/);
  });
});

describe('createProxyHandler with injected dependencies', () => {
  it('serves the management API and a proxied request from the dependencies it was given, and records the row', async () => {
    const { createProxyHandler } = jest.requireActual<typeof import('../../lambda/wiring/proxy-handler')>(
      '../../lambda/wiring/proxy-handler',
    );
    // No ADMIN_KEY anywhere in the configuration: the admin key comes only from the injected source.
    const config = loadConfig({
      ...fakes.env,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_PREFIX: tables.prefix,
      DATA_DIR: dataDir,
    });
    const adminKey = 'an-injected-admin-key-0123456789';
    const deps = { ...buildDeps(config), adminKey: async () => adminKey };
    const handler = createProxyHandler(deps) as unknown as StreamingHandler;

    const refused = await invoke(
      handler,
      functionUrlEvent('POST', '/api/admin/accounts', { authorization: 'Bearer not-the-admin-key' }, { name: 'x' }),
    );
    expect(refused.status).toBe(401);

    const created = await invoke(
      handler,
      functionUrlEvent('POST', '/api/admin/accounts', { authorization: `Bearer ${adminKey}` }, { name: 'injected' }),
    );
    expect(created.status).toBe(201);
    const { token, account_id: accountId } = JSON.parse(created.body) as { token: string; account_id: string };
    const saved = await invoke(
      handler,
      functionUrlEvent(
        'PUT',
        '/api/keys/prov-b',
        { authorization: `Bearer ${token}` },
        { key: 'sk-openai-injected-0123456789' },
      ),
    );
    expect(saved.status).toBe(200);

    const before = fakes.fakes['prov-b'].requests.length;
    const answer = await invoke(
      handler,
      functionUrlEvent(
        'POST',
        '/api/proxy/prov-b/v1/chat/completions',
        { authorization: `Bearer ${token}` },
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      ),
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).object).toBe('chat.completion');
    // The configured (fake) upstream got the stored key.
    expect(fakes.fakes['prov-b'].requests.length).toBe(before + 1);
    expect(fakes.fakes['prov-b'].requests.at(-1)?.headers.authorization).toBe('Bearer sk-openai-injected-0123456789');

    // The invocation ended after its row was in the store.
    const requestId = answer.headers['x-proxy-request-id'];
    expect(await deps.usageLog.find(accountId, requestId)).toMatchObject({
      provider: 'prov-b',
      status_code: 200,
      mode: 'stored',
    });
  });
});

describe('the path as received', () => {
  it("the router checks the event's rawPath, not the platform's decoded path: a dot segment is a 404, never forwarded", async () => {
    const { createProxyHandler } = jest.requireActual<typeof import('../../lambda/wiring/proxy-handler')>(
      '../../lambda/wiring/proxy-handler',
    );
    const config = loadConfig({
      ...fakes.env,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_PREFIX: tables.prefix,
      DATA_DIR: dataDir,
    });
    const adminKey = 'an-injected-admin-key-0123456789';
    const handler = createProxyHandler({
      ...buildDeps(config),
      adminKey: async () => adminKey,
    }) as unknown as StreamingHandler;
    const created = await invoke(
      handler,
      functionUrlEvent('POST', '/api/admin/accounts', { authorization: `Bearer ${adminKey}` }, { name: 'raw-path' }),
    );
    const { token } = JSON.parse(created.body) as { token: string };
    const before = fakes.fakes['prov-a'].requests.length + fakes.fakes['prov-b'].requests.length;
    for (const [raw, normalised] of [
      ['/api/proxy/prov-b/x/../../prov-a/v1/files', '/api/proxy/prov-a/v1/files'],
      ['/api/proxy/prov-b/x/%2e%2e/y', '/api/proxy/prov-b/y'],
    ]) {
      const event = functionUrlEvent(
        'POST',
        raw!,
        { authorization: `Bearer ${token}` },
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      );
      event.requestContext.http.path = normalised!;
      const answer = await invoke(handler, event);
      expect(answer.status).toBe(404);
    }
    expect(fakes.fakes['prov-a'].requests.length + fakes.fakes['prov-b'].requests.length).toBe(before);
  });
});

describe('identical requests in flight at once', () => {
  const adminKey = 'an-injected-admin-key-0123456789';

  /** Three identical cached requests at the same moment, through this handler (which takes `adminKey` as the admin key). */
  async function upstreamCallsForThreeIdentical(handler: StreamingHandler): Promise<number> {
    const created = await invoke(
      handler,
      functionUrlEvent('POST', '/api/admin/accounts', { authorization: `Bearer ${adminKey}` }, { name: 'flights' }),
    );
    const { token } = JSON.parse(created.body) as { token: string };
    await invoke(
      handler,
      functionUrlEvent(
        'PUT',
        '/api/keys/prov-b',
        { authorization: `Bearer ${token}` },
        { key: 'sk-openai-flights-0123456789' },
      ),
    );

    const before = fakes.fakes['prov-b'].requests.length;
    for (let i = 0; i < 3; i++) fakes.fakes['prov-b'].next({ latencyMs: 400 });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `same question ${Math.random()}` }] };
    const event = () =>
      functionUrlEvent(
        'POST',
        '/api/proxy/prov-b/v1/chat/completions',
        { authorization: `Bearer ${token}`, 'x-proxy-cache': 'true' },
        body,
      );
    const answers = await Promise.all([invoke(handler, event()), invoke(handler, event()), invoke(handler, event())]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    return fakes.fakes['prov-b'].requests.length - before;
  }

  /** A handler built by `createProxyHandler` over dependencies built with these options. */
  function handlerWith(options: Parameters<typeof buildDeps>[2]): StreamingHandler {
    const { createProxyHandler } = jest.requireActual<typeof import('../../lambda/wiring/proxy-handler')>(
      '../../lambda/wiring/proxy-handler',
    );
    const config = loadConfig({
      ...fakes.env,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_PREFIX: tables.prefix,
      DATA_DIR: dataDir,
    });
    return createProxyHandler({
      ...buildDeps(config, undefined, options),
      adminKey: async () => adminKey,
    }) as unknown as StreamingHandler;
  }

  it('the Lambda entry keeps no flights: each request calls the provider (an instance serves one at a time anyway)', async () => {
    // The entry as the runtime loads it, configured through its environment.
    Object.assign(process.env, { ...fakes.env, TABLE_PREFIX: tables.prefix, DATA_DIR: dataDir, ADMIN_KEY: adminKey });
    let entry: typeof import('../../lambda/entry/handler') | undefined;
    jest.isolateModules(() => {
      entry = jest.requireActual<typeof import('../../lambda/entry/handler')>('../../lambda/entry/handler');
    });
    expect(await upstreamCallsForThreeIdentical(entry!.handler as unknown as StreamingHandler)).toBe(3);
  });

  it('the local server’s dependencies share the first answer with the requests waiting for it', async () => {
    expect(await upstreamCallsForThreeIdentical(handlerWith({ shareInFlightAnswers: true }))).toBe(1);
  });
});
