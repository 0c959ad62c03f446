import { RateLimitedError, StoreUnavailableError } from '../errors';
import { rateLimitHeaders, type Authenticated, type Limited } from './state';
import type { Step } from './step';

/** Step 4: a shared per-token budget per minute across all providers and instances. */
export function enforceRateLimit(): Step<Authenticated, Limited> {
  return {
    name: 'rate limit',
    async run({ lookups }) {
      const decision = await lookups.rateLimit.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      if (!decision.allowed) throw new RateLimitedError(decision.limit, rateLimitHeaders(decision));
      return { rateLimit: decision };
    },
  };
}
