import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { join } from 'node:path';
import { LocalKeyWrapper } from '../keys/crypto/local-key-wrapper';

/** The file every local instance seals provider keys with (deps.ts reads the same one). */
export const localMasterKeyPath = (dataDir: string) => join(dataDir, 'local-master.key');

/** The accounts-table item recording which local master key the store's provider keys are sealed with. */
const MARKER_KEY = { pk: { S: 'LOCAL_MASTER_KEY' }, sk: { S: 'FINGERPRINT' } };

export class ForeignKeyMaterialError extends Error {
  constructor(dataDir: string, storeKey: string, ownKey: string) {
    super(
      `This store's provider keys are sealed with local master key ${storeKey}, but ${localMasterKeyPath(dataDir)} is ${ownKey}, ` +
        'so this instance could not open them. Instances sharing one DynamoDB must share the key file: copy local-master.key ' +
        `from the first instance's DATA_DIR into ${dataDir} (or point DATA_DIR at the same folder), then start again.`,
    );
  }
}

/**
 * Two local instances on one DynamoDB (DYNAMODB_ENDPOINT) each read the master key from their own
 * DATA_DIR. The first to start records its key's fingerprint (a hash prefix, not the key) in the
 * accounts table; an instance with another key refuses to start instead of answering 500 on every
 * stored-key request later.
 */
export async function checkSharedKeyMaterial(
  raw: DynamoDBClient,
  accountsTable: string,
  dataDir: string,
): Promise<void> {
  const own = LocalKeyWrapper.fromFile(localMasterKeyPath(dataDir)).keyRef;
  try {
    await raw.send(
      new PutItemCommand({
        TableName: accountsTable,
        Item: { ...MARKER_KEY, key_ref: { S: own } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return;
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
  const { Item } = await raw.send(
    new GetItemCommand({ TableName: accountsTable, Key: MARKER_KEY, ConsistentRead: true }),
  );
  const recorded = Item?.key_ref?.S;
  if (recorded && recorded !== own) throw new ForeignKeyMaterialError(dataDir, recorded, own);
}
