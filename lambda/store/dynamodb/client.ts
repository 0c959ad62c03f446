import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LeanDocumentClient, environmentCredentials, type DocumentClient } from './wire/document-client';

export interface DynamoClients {
  /** The SDK client, for table administration (creating local tables). Never on the request path. */
  raw: DynamoDBClient;
  /** The client every store uses: the document commands over a lean, kept-alive JSON-protocol transport. */
  doc: DocumentClient;
}

export function createDynamoClients(options: { region: string; endpoint?: string; env?: NodeJS.ProcessEnv }): DynamoClients {
  const local = Boolean(options.endpoint);
  const raw = new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    // DynamoDB Local accepts any credentials; in AWS the function's role provides them.
    credentials: local ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined,
  });
  const doc = new LeanDocumentClient({ region: options.region, endpoint: options.endpoint, credentials: environmentCredentials(options.env ?? process.env, local) });
  return { raw, doc };
}
