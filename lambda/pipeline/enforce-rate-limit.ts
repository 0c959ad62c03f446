import { WHOLE_WINDOW_SECONDS } from '../auth/sliding-minute';
import { RateLimitedError } from '../base/errors';
import { rateLimitHeaders, type Authenticated, type Limited } from './state';
import type { Step } from './step';

/** Step 4: a shared per-token budget per minute across all providers and instances, counted by the token gate. */
export function enforceRateLimit(): Step<Authenticated, Limited> {
  return {
    name: 'rate limit',
    run({ gate }) {
      if (gate.kind === 'limited')
        throw new RateLimitedError(gate.rateLimit.limit, rateLimitHeaders(gate.rateLimit), WHOLE_WINDOW_SECONDS);
      return { rateLimit: gate.rateLimit };
    },
  };
}
