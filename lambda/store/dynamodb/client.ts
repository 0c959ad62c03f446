import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { NodeHttpHandler } from '@smithy/node-http-handler';

export interface DynamoClients {
  raw: DynamoDBClient;
  doc: DynamoDBDocumentClient;
}

/**
 * One client per process, with keep-alive sockets: a store round trip on the hot
 * path must not pay for a new connection.
 */
export function createDynamoClients(options: { region: string; endpoint?: string }): DynamoClients {
  const local = Boolean(options.endpoint);
  const raw = new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    // DynamoDB Local accepts any credentials; in AWS the function's role provides them.
    credentials: local ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined,
    maxAttempts: 3,
    requestHandler: new NodeHttpHandler({
      httpAgent: new Agent({ keepAlive: true, maxSockets: 256 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
    }),
  });
  const doc = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
  return { raw, doc };
}
