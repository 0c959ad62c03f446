import type { Deps } from '../deps';
import { requesterLabel } from '../usage/usage-row';
import type { LookupsStarted, Routed } from './state';
import type { Step } from './step';

/** Keeps an early rejection from being reported as unhandled before its step awaits it. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

const NO_KEY_READ = Promise.resolve(undefined);

/**
 * Step 2: starts every store read this request needs at once. The token carries its
 * account id, so the token record, its budgets, the rate counter, the stored provider key
 * and the cache entry don't wait for each other (token, budgets and key are one
 * BatchGetItem). The steps that follow await them in order.
 */
export function startLookups(deps: Pick<Deps, 'accounts' | 'budgets' | 'rateLimiter' | 'providerKeys' | 'cache' | 'now'>): Step<Routed, LookupsStarted> {
  return {
    name: 'start lookups',
    run(state) {
      const { token } = state;
      if (!token) return { lookups: undefined };
      const now = deps.now();
      return {
        lookups: {
          token: quiet(deps.accounts.getToken(token.accountId, token.tokenId)),
          budgets: quiet(deps.budgets.statusesFor(token.accountId, token.tokenId, requesterLabel(state.requester), now)),
          rateLimit: quiet(deps.rateLimiter.hit(token.tokenId, now)),
          providerKey: state.mode === 'stored' ? quiet(deps.providerKeys.get(token.accountId, state.provider.id)) : NO_KEY_READ,
          cachedResponse: deps.cache.lookup(state.cache, now),
        },
      };
    },
  };
}
