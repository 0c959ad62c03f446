import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LeanDocumentClient, environmentCredentials, type DocumentClient } from './wire/document-client';

export interface DynamoClients {
  /** The SDK client, for table administration (creating local tables). Never on the request path. */
  raw: DynamoDBClient;
  /** The client every store uses: the document commands over a lean, kept-alive JSON-protocol transport. */
  doc: DocumentClient;
}

interface ClientOptions {
  region: string;
  endpoint?: string;
  env?: NodeJS.ProcessEnv;
}

/** The stores' client: all the request path needs. */
export function createDocumentClient(options: ClientOptions): DocumentClient {
  const local = Boolean(options.endpoint);
  return new LeanDocumentClient({ region: options.region, endpoint: options.endpoint, credentials: environmentCredentials(options.env ?? process.env, local) });
}

/** Both clients, for the local server's table set-up and for tests. */
export function createDynamoClients(options: ClientOptions): DynamoClients {
  const local = Boolean(options.endpoint);
  const raw = new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    // DynamoDB Local accepts any credentials; in AWS the function's role provides them.
    credentials: local ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined,
  });
  return { raw, doc: createDocumentClient(options) };
}
