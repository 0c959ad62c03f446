import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { awsCredentialChain, LOCAL_CREDENTIALS } from './wire/credentials';
import { LeanDocumentClient, type DocumentClient } from './wire/document-client';

export interface DynamoClients {
  /** The SDK client, for table administration (creating local tables). Never on the request path. */
  raw: DynamoDBClient;
  /** The client every store uses: the document commands over a lean, kept-alive JSON-protocol transport. */
  doc: DocumentClient;
}

interface ClientOptions {
  region: string;
  /** DynamoDB Local's address; without one, the region's DynamoDB with the AWS SDK's credential chain. */
  endpoint?: string;
}

/** The stores' client: all the request path needs. */
export function createDocumentClient(options: ClientOptions): DocumentClient {
  return new LeanDocumentClient({
    region: options.region,
    endpoint: options.endpoint,
    credentials: options.endpoint ? () => LOCAL_CREDENTIALS : awsCredentialChain(),
  });
}

/** Both clients, for the local server's table set-up and for tests. */
export function createDynamoClients(options: ClientOptions): DynamoClients {
  const raw = new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    // DynamoDB Local accepts any credentials; in AWS the SDK's own chain finds the function role's.
    credentials: options.endpoint ? LOCAL_CREDENTIALS : undefined,
  });
  return { raw, doc: createDocumentClient(options) };
}
