import { startDynamoDbLocal } from '../../lambda/local/dynamodb-local';

/**
 * One in-memory DynamoDB Local for the whole run; every test file isolates
 * itself with its own table prefix. Workers inherit DYNAMODB_ENDPOINT.
 */
export default async function globalSetup(): Promise<void> {
  // The SDK versions are pinned in the lock file; its notice about releases after January 2027 is noise in test output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  if (process.env.DYNAMODB_ENDPOINT) return;
  const local = await startDynamoDbLocal();
  process.env.DYNAMODB_ENDPOINT = local.endpoint;
  (globalThis as { __stopDynamoDbLocal?: () => Promise<void> }).__stopDynamoDbLocal = local.stop;
}
