import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsAdapters, FoldAdapters } from './deps';
import { SnsAlertTopic } from '../alerts/sns-topic';
import { SqsAlertQueue } from '../alerts/sqs-queue';
import { S3ObjectStore } from '../export/s3-object-store';
import { KmsKeyWrapper } from '../keys/crypto/kms-key-wrapper';
import { secretReader } from '../auth/secrets-manager';
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { cognitoAppClient } from '../people/cognito-app-client';

/** KMS wraps the data keys of the provider keys the proxy seals, and of the webhook secrets the consumer opens. */
const kmsKeyWrapper = (region: string, keyId: string) => new KmsKeyWrapper(new KMSClient({ region }), keyId);

/**
 * The adapters only AWS has: KMS wraps the provider keys' data keys, Secrets Manager holds the admin
 * key. Only the Lambda entries import this module, so the local server, which keeps its key in a file
 * and its admin key in ADMIN_KEY or its data dir, never loads either SDK client (nor SNS's or SQS's).
 * Each entry's bundle keeps only the adapters it uses.
 */
export const awsAdapters: AwsAdapters = {
  keyWrapper: kmsKeyWrapper,
  secretReader: (region, secretId) => secretReader(new SecretsManagerClient({ region }), secretId),
  cognitoAppClient: (region, userPoolId) => cognitoAppClient(new CognitoIdentityProviderClient({ region }), userPoolId),
};

/** The stream consumer's: SNS and SQS for budget alerts, and KMS as the proxy's, for the webhook secrets it sealed. */
export const foldAdapters: FoldAdapters = {
  // One attempt per call: the alert queue retries a failed delivery (retry.ts, `alertDelivery`), so
  // the SDK's own three tries would multiply its attempts.
  alertTopic: (region, topicArn) => new SnsAlertTopic(new SNSClient({ region, maxAttempts: 1 }), topicArn),
  alertQueue: (region, queueUrl) => new SqsAlertQueue(new SQSClient({ region }), queueUrl),
  keyWrapper: kmsKeyWrapper,
  exportStore: (region, bucket) => new S3ObjectStore(new S3Client({ region }), bucket),
};
