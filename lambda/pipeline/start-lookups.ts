import type { Deps } from '../deps';
import { requesterLabel } from '../usage/usage-row';
import { proxyState, type Middleware } from './middy-types';

/** Keeps an early rejection from being reported as unhandled before its step awaits it. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Starts every store read this request needs at once: the token carries its
 * account id, so the token record, its budgets, the rate counter, the stored
 * provider key and the cache entry don't wait for each other (token, budgets
 * and key are one BatchGetItem). The steps that follow await them in order.
 */
export function startLookups(deps: Deps): Middleware {
  return {
    before: function startLookups(request) {
      const state = proxyState(request.event);
      const token = state.token;
      if (!token) return;
      const now = deps.now();
      state.lookups = {
        token: quiet(deps.accounts.getToken(token.accountId, token.tokenId)),
        budgets: quiet(deps.budgets.statusesFor(token.accountId, token.tokenId, requesterLabel(state.requester), now)),
        rateLimit: quiet(deps.rateLimiter.hit(token.tokenId, now)),
        providerKey: state.mode === 'stored' ? quiet(deps.providerKeys.get(token.accountId, state.provider.id)) : undefined,
        cachedResponse: deps.cache.lookup(state.cache, now),
      };
    },
  };
}
