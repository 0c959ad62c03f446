import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import type { Credentials } from './sigv4';

/** Called before every signature; a provider that caches must refresh what is about to expire. */
export type CredentialProvider = () => Credentials | Promise<Credentials>;

/** DynamoDB Local checks signatures' form, not their keys. */
export const LOCAL_CREDENTIALS: Credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The AWS SDK's own credential chain, as the SDK clients of this code use it:
 * in Lambda the function role's keys from the environment (the first link, so
 * no other source is tried); elsewhere profiles, SSO, web identity, container
 * and instance metadata. The provider caches what it found and fetches anew
 * five minutes before the credentials expire. Its first call (a few ms) is
 * made here, while the function initialises, not on the first request; a
 * failure is left for that request to meet.
 */
export function awsCredentialChain(): CredentialProvider {
  const provider = fromNodeProviderChain();
  provider().catch(() => undefined);
  return provider;
}
