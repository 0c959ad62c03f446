import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsAdapters } from './deps';
import { KmsKeyWrapper } from '../keys/crypto/kms-key-wrapper';
import { secretReader } from '../auth/secrets-manager';

/**
 * The adapters only AWS has: KMS wraps the provider keys' data keys, Secrets Manager holds the admin
 * key. Only the Lambda entry imports this module, so the local server, which keeps its key in a file
 * and its admin key in ADMIN_KEY or its data dir, never loads either SDK client.
 */
export const awsAdapters: AwsAdapters = {
  keyWrapper: (region, keyId) => new KmsKeyWrapper(new KMSClient({ region }), keyId),
  secretReader: (region, secretId) => secretReader(new SecretsManagerClient({ region }), secretId),
};
