/**
 * Provider keys as stored (envelope-encrypted) and the sealer that encrypts and opens them. The
 * DynamoDB adapter in `dynamodb/` and the wrappers in `crypto/` implement them.
 */
import type { ProviderId } from '../providers/registry';

/** An envelope-encrypted provider key as stored: AES-256-GCM ciphertext plus the wrapped data key. */
export interface EncryptedSecret {
  ciphertext: Uint8Array;
  iv: Uint8Array;
  wrappedKey: Uint8Array;
  /** Which key wrapped the data key (`kms:<key id>` or `local:<key id>`), so a wrong adapter fails clearly. */
  keyRef: string;
}

export interface StoredProviderKey {
  provider: ProviderId;
  secret: EncryptedSecret;
  /** Last four characters of the key, for recognising it in the dashboard. */
  hint: string;
  updatedAt: string;
}

export interface ProviderKeyStore {
  get(accountId: string, provider: ProviderId): Promise<StoredProviderKey | undefined>;
  put(accountId: string, key: StoredProviderKey): Promise<void>;
  delete(accountId: string, provider: ProviderId): Promise<boolean>;
  list(accountId: string): Promise<StoredProviderKey[]>;
}

/** Binds a ciphertext to the account and provider it belongs to. */
export interface EncryptionContext {
  account_id: string;
  provider: string;
}

export interface SecretSealer {
  seal(plaintext: string, context: EncryptionContext): Promise<EncryptedSecret>;
  open(secret: EncryptedSecret, context: EncryptionContext): Promise<string>;
}
