import type { Deps } from '../wiring/deps';
import { ValidationError } from '../base/errors';
import { openPool } from '../keys/open-pool';
import type { Identified, Keyed, Routed } from './state';
import type { Step } from './step';

/**
 * Step 8: the keys to send upstream. Stored mode opens the account's saved keys for the provider
 * (docs/api.md, "Credentials"); pass-through uses the client's own key as is and keeps it only
 * for this request.
 */
export function resolveProviderKey(deps: Pick<Deps, 'sealer'>): Step<Routed & Identified, Keyed> {
  return {
    name: 'resolve provider key',
    async run(state, reads) {
      if (state.mode === 'pass-through') return { upstreamKey: state.credential, keyPool: [] };
      const { id, displayName } = state.provider;
      // None for a provider reached through AWS with no saved key: the forward step signs with the runtime's AWS credentials.
      const keyPool = await openPool(
        deps.sealer,
        reads.keyPool,
        state.token.accountId,
        state.provider,
        () =>
          new ValidationError(
            `No ${displayName} key is saved for this account (provider ${id}). Save one on the dashboard's Integrations page or with PUT /api/keys/${id}, or send your own key with the x-proxy-token header (pass-through mode).`,
          ),
      );
      return { upstreamKey: undefined, keyPool };
    },
  };
}
