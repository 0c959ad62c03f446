import { hashSecret, type ParsedToken } from '../auth/proxy-token';
import type { Deps } from '../deps';
import { requesterLabel } from '../usage/usage-row';
import { quiet } from '../quiet';
import { requestBudgets } from '../budgets/request-budgets';
import type { Lookups, LookupsStarted, Routed } from './state';
import type { Step } from './step';

const NO_KEY_READ = Promise.resolve(undefined);

type LookupDeps = Pick<Deps, 'tokenGate' | 'budgets' | 'budgetHints' | 'providerKeys' | 'cache' | 'now'>;

/**
 * Everything a request reads from the store before forwarding, started at once. Warm and with no
 * budget or cache in play this is one call: the token gate (token check and rate count, token-gate.ts).
 * The stored key comes from the instance's short cache (a read beside the gate when cold), a
 * named requester's budget and the request's tag budgets are read beside the gate, and so is the
 * cache entry when asked for.
 */
export function startLookupsFor(deps: LookupDeps, state: Pick<Routed, 'requester' | 'requestTags' | 'mode' | 'provider' | 'cache'> & { token: ParsedToken }): Lookups {
  const { token } = state;
  const now = deps.now();
  const presented = { accountId: token.accountId, tokenId: token.tokenId, secretHash: hashSecret(token.secret) };
  const gate = quiet(deps.tokenGate.admit(presented, now));
  return {
    presented,
    gate,
    // Tags a malformed header named are not read: the request is refused in step 5.
    budgets: quiet(requestBudgets(deps, presented, requesterLabel(state.requester), state.requestTags.ok ? state.requestTags.tags : {}, gate, now)),
    providerKey: state.mode === 'stored' ? quiet(deps.providerKeys.get(token.accountId, state.provider.id)) : NO_KEY_READ,
    cachedResponse: deps.cache.lookup(state.cache, now),
  };
}

/** Step 2: the token carries its account id, so nothing here waits for anything else. The steps that follow await them in order. */
export function startLookups(deps: LookupDeps): Step<Routed, LookupsStarted> {
  return {
    name: 'start lookups',
    run(state) {
      const { token } = state;
      return { lookups: token ? startLookupsFor(deps, { ...state, token }) : undefined };
    },
  };
}
