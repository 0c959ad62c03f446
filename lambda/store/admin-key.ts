import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Config } from '../config';

/**
 * The admin API's bearer key: from `ADMIN_KEY` locally, or read once from
 * Secrets Manager at cold start and kept for the life of the instance.
 */
export function adminKeySource(config: Pick<Config, 'adminKey' | 'adminSecretArn' | 'region'>): () => Promise<string | undefined> {
  if (config.adminKey) {
    const key = config.adminKey;
    return async () => key;
  }
  if (!config.adminSecretArn) return async () => undefined;
  let loading: Promise<string | undefined> | undefined;
  const arn = config.adminSecretArn;
  return () => {
    loading ??= new SecretsManagerClient({ region: config.region })
      .send(new GetSecretValueCommand({ SecretId: arn }))
      .then((result) => result.SecretString?.trim() || undefined)
      .catch((error) => {
        loading = undefined; // try again on the next request instead of caching a failure
        throw error;
      });
    return loading;
  };
}
