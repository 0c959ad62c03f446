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

/** The label of the key `PUT /api/keys/{provider}` saves, and of every key saved before pools. */
export const DEFAULT_KEY_LABEL = 'default';

/** What the provider last said of a key (docs/fallbacks.md, "Key pools"): throttled until a time, or refused. */
export type KeyMark = { state: 'cooling'; until: number } | { state: 'failing' };

/** One key of a pool as it was saved: a mark applies to that version only (re-saving clears it). */
export interface KeyVersion {
  provider: ProviderId;
  label: string;
  updatedAt: string;
}

export interface StoredProviderKey extends KeyVersion {
  secret: EncryptedSecret;
  /** Last four characters of the key, for recognising it in the dashboard. */
  hint: string;
  mark?: KeyMark;
}

export interface ProviderKeyStore {
  /** The account's keys for one provider (its pool), `default` first, then by label: the order they are tried in. */
  pool(accountId: string, provider: ProviderId): Promise<StoredProviderKey[]>;
  put(accountId: string, key: StoredProviderKey): Promise<void>;
  delete(accountId: string, provider: ProviderId, label: string): Promise<boolean>;
  list(accountId: string): Promise<StoredProviderKey[]>;
  /** Notes a key's cool-down or failure for every instance; a key changed or removed since is left alone. */
  mark(accountId: string, key: KeyVersion, mark: KeyMark): Promise<void>;
}

/** Binds a ciphertext to the account and provider it belongs to. */
export interface EncryptionContext {
  account_id: string;
  provider: string;
}

/**
 * A key's encryption context: a labelled key's label is bound in the provider's value (the context's
 * key names stay the two the KMS grant allows), and a `default` key's context is the one keys saved
 * before pools were sealed with, so they still open.
 */
export function keyContext(accountId: string, key: Pick<KeyVersion, 'provider' | 'label'>): EncryptionContext {
  const provider = key.label === DEFAULT_KEY_LABEL ? key.provider : `${key.provider}/${key.label}`;
  return { account_id: accountId, provider };
}

/** The pool's order: `default` first, then by label. */
export function poolOrder(a: Pick<KeyVersion, 'label'>, b: Pick<KeyVersion, 'label'>): number {
  if (a.label === b.label) return 0;
  if (a.label === DEFAULT_KEY_LABEL) return -1;
  if (b.label === DEFAULT_KEY_LABEL) return 1;
  return a.label < b.label ? -1 : 1;
}

export interface SecretSealer {
  seal(plaintext: string, context: EncryptionContext): Promise<EncryptedSecret>;
  open(secret: EncryptedSecret, context: EncryptionContext): Promise<string>;
}
