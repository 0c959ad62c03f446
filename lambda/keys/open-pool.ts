import { StoredKeyNotSendableError, StoredKeyUnreadableError, StoreUnavailableError } from '../base/errors';
import { isSendableCredential } from '../base/plain-text';
import type { Provider } from '../providers/registry';
import { keyContext, type KeyMark, type KeyVersion, type SecretSealer, type StoredProviderKey } from './ports';

/** A stored key opened for one request: what it sends, and what identifies it in rows and marks. */
export interface OpenedKey extends KeyVersion {
  key: string;
  hint: string;
  /** The mark the store had when the pool was read. */
  mark?: KeyMark;
}

/**
 * An account's saved keys for a provider (its pool), each opened and checked sendable: the one way
 * stored keys become credentials, for the request's own provider and for a fallback on another.
 * Empty for a provider reached through AWS with no key saved (the caller signs with the runtime's
 * AWS credentials); `missing` names what the caller's client should do when there is neither, as
 * its wording differs between the two uses. A key that does not open fails the request: nothing is sent.
 */
export async function openPool(
  sealer: SecretSealer,
  read: Promise<StoredProviderKey[]>,
  accountId: string,
  provider: Provider,
  missing: () => Error,
): Promise<OpenedKey[]> {
  const stored = await read.catch((error: unknown) => {
    throw new StoreUnavailableError(error);
  });
  if (stored.length === 0 && provider.upstream.aws) return [];
  if (stored.length === 0) throw missing();
  return Promise.all(
    stored.map(async ({ secret, ...version }) => {
      const key = await sealer.open(secret, keyContext(accountId, version)).catch((error) => {
        throw new StoredKeyUnreadableError(provider.id, error);
      });
      if (!isSendableCredential(key)) throw new StoredKeyNotSendableError(provider.id);
      return { ...version, key };
    }),
  );
}
