import type { AwsSigningSource } from '../config';
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
 */
export class RuntimeCredentials {
  private lastLookup: CredentialLookup = 'not-looked-up';

  constructor(
    private readonly source: AwsSigningSource,
    private readonly lookup: AwsCredentialSource,
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
