import type { Deps } from '../deps';
import { RateLimitedError, StoreUnavailableError } from '../errors';
import { proxyState, type Middleware } from './middy-types';
import { rateLimitHeaders } from './state';

/** Step 4: a shared per-token budget per minute across all providers and instances. */
export function enforceRateLimit(_deps: Deps): Middleware {
  return {
    before: async function enforceRateLimit(request) {
      const state = proxyState(request.event);
      const decision = await state.lookups!.rateLimit.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      state.rateLimit = decision;
      if (!decision.allowed) throw new RateLimitedError(decision.limit, rateLimitHeaders(decision));
    },
  };
}
