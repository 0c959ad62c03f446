import { StoredKeyNotSendableError, StoredKeyUnreadableError, StoreUnavailableError } from '../base/errors';
import { isSendableCredential } from '../base/plain-text';
import type { Provider } from '../providers/registry';
import type { SecretSealer, StoredProviderKey } from './ports';

/**
 * An account's saved key for a provider, opened and checked sendable: the one way a stored key
 * becomes a credential, for the request's own provider and for a fallback on another.
 * `undefined` for a provider reached through AWS with no key saved (the caller signs with the
 * runtime's AWS credentials); `missing` names what the caller's client should do when there is
 * neither, as its wording differs between the two uses.
 */
export async function openStoredKey(
  sealer: SecretSealer,
  read: Promise<StoredProviderKey | undefined>,
  accountId: string,
  provider: Provider,
  missing: () => Error,
): Promise<string | undefined> {
  const stored = await read.catch((error: unknown) => {
    throw new StoreUnavailableError(error);
  });
  if (!stored && provider.upstream.aws) return undefined;
  if (!stored) throw missing();
  const key = await sealer.open(stored.secret, { account_id: accountId, provider: provider.id }).catch((error) => {
    throw new StoredKeyUnreadableError(provider.id, error);
  });
  if (!isSendableCredential(key)) throw new StoredKeyNotSendableError(provider.id);
  return key;
}
