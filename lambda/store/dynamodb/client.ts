import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { VERSION } from '../../base/version';
import { ATTEMPT_SILENCE_MS } from './deadlines';
import { SdkDocumentClient, type DocumentClient, type StoreSdkClients } from './document-client';
import { ItemCalls } from './item-calls';

export interface DynamoClients {
  /** The SDK client, for table administration (creating local tables). Never on the request path. */
  raw: DynamoDBClient;
  /** The client every store uses: the document commands over the same SDK client. */
  doc: DocumentClient;
}

interface ClientOptions {
  region: string;
  /** DynamoDB Local's address; without one, the region's DynamoDB with the AWS SDK's credential chain. */
  endpoint?: string;
}

/** A connection DynamoDB does not accept within this is given up (and the call retried). */
const CONNECT_TIMEOUT_MS = 3_000;

/** The SDK's retry step, doing nothing but the one attempt. */
const SEND_ONCE: Extract<DynamoDBClientConfig['retryStrategy'], { retry: unknown }> = {
  retry: (next, args) => next(args),
};

/**
 * Creating a table, on a busy machine's DynamoDB Local, may keep its connection silent for longer
 * than any request's store call would: the administration client (never on the request path) waits this long.
 */
const ADMINISTRATION_SILENCE_MS = 60_000;

/** What the single-item calls name themselves in DynamoDB's logs (CloudTrail's `userAgent`). */
const USER_AGENT = `ai-usage-proxy/${VERSION} aws-sdk-js`;

/** DynamoDB Local checks signatures' form, not their keys. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The one DynamoDB client of a process. It signs with the SDK's SigV4; in AWS its credentials come
 * from the SDK's default chain (in Lambda the function role's, from the runtime's environment).
 * Connections are kept alive between calls, so a warm instance's store call reuses its socket.
 * The SDK makes one attempt per call: the retries are lambda/base/retry.ts's (document-client.ts), so
 * they never nest. `maxAttempts: 1` says so, and the retry step hands the call straight through
 * (`SEND_ONCE`): the SDK's own strategy would still run on every call, and rewrap an error that is
 * not an `Error` of its own realm (a socket's, under a test runner's sandbox) into one without its
 * `code`.
 */
export function createDynamoClient(options: ClientOptions, silenceMs = ATTEMPT_SILENCE_MS): DynamoDBClient {
  return new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    credentials: options.endpoint ? LOCAL_CREDENTIALS : undefined,
    maxAttempts: 1,
    retryStrategy: SEND_ONCE,
    requestHandler: storeRequestHandler(silenceMs),
  });
}

/** What the document client sends through (document-client.ts): `documents` itself, and its parts for the single-item calls. */
export function storeSdkClients(options: ClientOptions, documents: DynamoDBClient): StoreSdkClients {
  return { documents, items: new ItemCalls(documents, options.region, options.endpoint, USER_AGENT) };
}

/**
 * The HTTP handler of every client of the store (tables and, locally, streams). A silent
 * connection throws (`throwOnRequestTimeout`): without it the SDK only logs a warning and waits on,
 * so a stalled store would hold every caller for as long as it stays stalled. Each call's own
 * deadline, retries included, is the document client's (document-client.ts).
 */
export function storeRequestHandler(silenceMs = ATTEMPT_SILENCE_MS): NodeHttpHandler {
  const agentOptions = { keepAlive: true, maxSockets: 256 };
  return new NodeHttpHandler({
    httpAgent: new HttpAgent(agentOptions),
    httpsAgent: new HttpsAgent(agentOptions),
    connectionTimeout: CONNECT_TIMEOUT_MS,
    requestTimeout: silenceMs,
    throwOnRequestTimeout: true,
  });
}

/** The stores' client: all the request path needs. */
export function createDocumentClient(options: ClientOptions): DocumentClient {
  return new SdkDocumentClient(storeSdkClients(options, createDynamoClient(options)));
}

/** Both, over one SDK client: for tests. */
export function createDynamoClients(options: ClientOptions): DynamoClients {
  const raw = createDynamoClient(options);
  return { raw, doc: new SdkDocumentClient(storeSdkClients(options, raw)) };
}

/** The client that creates and describes tables (the local server's set-up), patient with a busy store. */
export function createAdministrationClient(options: ClientOptions): DynamoDBClient {
  return createDynamoClient(options, ADMINISTRATION_SILENCE_MS);
}
