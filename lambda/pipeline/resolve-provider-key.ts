import type { Deps } from '../wiring/deps';
import {
  StoredKeyNotSendableError,
  StoredKeyUnreadableError,
  StoreUnavailableError,
  ValidationError,
} from '../base/errors';
import { isSendableCredential } from '../base/plain-text';
import type { Identified, Keyed, Routed } from './state';
import type { Step } from './step';

/**
 * Step 8: the key to send upstream. Stored mode opens the account's saved key
 * (docs/api.md, "Credentials"); pass-through uses the client's own key as is and keeps it only
 * for this request.
 */
export function resolveProviderKey(deps: Pick<Deps, 'sealer'>): Step<Routed & Identified, Keyed> {
  return {
    name: 'resolve provider key',
    async run(state, reads) {
      if (state.mode === 'pass-through') return { upstreamKey: state.credential };
      const stored = await reads.providerKey.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      const { id, displayName } = state.provider;
      // Reached through AWS: without a saved key, the forward step signs with the runtime's AWS credentials.
      if (!stored && state.provider.upstream.aws) return { upstreamKey: undefined };
      if (!stored) {
        throw new ValidationError(
          `No ${displayName} key is saved for this account (provider ${id}). Save one on the dashboard's Integrations page or with PUT /api/keys/${id}, or send your own key with the x-proxy-token header (pass-through mode).`,
        );
      }
      const upstreamKey = await deps.sealer
        .open(stored.secret, { account_id: state.token.accountId, provider: id })
        .catch((error) => {
          throw new StoredKeyUnreadableError(id, error);
        });
      if (!isSendableCredential(upstreamKey)) throw new StoredKeyNotSendableError(id);
      return { upstreamKey };
    },
  };
}
