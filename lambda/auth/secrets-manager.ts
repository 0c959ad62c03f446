import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** Reads one secret's string value (trimmed; an empty secret reads as unset). */
export function secretReader(client: SecretsManagerClient, secretId: string): () => Promise<string | undefined> {
  return async () => {
    const result = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    return result.SecretString?.trim() || undefined;
  };
}
