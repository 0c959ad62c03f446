import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import type { AwsSigningSource } from '../wiring/config';
import type { AwsCredentialSource } from './aws-signing';

/** What the last look for signing credentials found: none made yet (nothing signed), credentials, or none. */
export type CredentialLookup = 'not-looked-up' | 'found' | 'none-found';

/** Where the proxy's signing credentials come from, and what the last look found (the management API shows it). */
export interface SigningStatus {
  source: AwsSigningSource;
  credentials: CredentialLookup;
}

/**
 * The runtime's AWS credentials, remembering what the last look found. Telling the dashboard whether
 * credentials exist costs no lookup of its own: a lookup only happens when a request is signed
 * (one elsewhere may wait on instance metadata), and the status repeats what that one found.
 *
 * By default they come from the AWS SDK's own credential chain, as the DynamoDB client uses it: in
 * Lambda the function role's keys from the environment; elsewhere profiles, SSO, web identity,
 * container and instance metadata. The chain caches what it found and fetches anew before the
 * credentials expire. It is built on first use: a process that never signs a request never looks.
 */
export class RuntimeCredentials {
  private lastLookup: CredentialLookup = 'not-looked-up';
  private chain: AwsCredentialSource | undefined;

  constructor(
    private readonly source: AwsSigningSource,
    private readonly lookup: AwsCredentialSource = () => (this.chain ??= fromNodeProviderChain())(),
  ) {}

  readonly get: AwsCredentialSource = async () => {
    try {
      const credentials = await this.lookup();
      this.lastLookup = 'found';
      return credentials;
    } catch (error) {
      this.lastLookup = 'none-found';
      throw error;
    }
  };

  status(): SigningStatus {
    return { source: this.source, credentials: this.lastLookup };
  }
}
