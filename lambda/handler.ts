import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import { buildDeps } from './deps';
import { answerErrors } from './pipeline/answer-errors';
import { authenticate } from './pipeline/authenticate';
import { enforceBudget } from './pipeline/enforce-budget';
import { enforceRateLimit } from './pipeline/enforce-rate-limit';
import { forwardUpstream } from './pipeline/forward-upstream';
import { pipelineData } from './pipeline/middy-types';
import { resolveProviderKey } from './pipeline/resolve-provider-key';
import { routeRequest } from './pipeline/route-request';
import { serveFromCache } from './pipeline/serve-from-cache';
import { startLookups } from './pipeline/start-lookups';
import { validateBody } from './pipeline/validate-body';

// The local server loads this module too, and serves many requests per process: until it builds its
// own dependencies, answers of identical in-flight requests are shared here (a Lambda instance never has any).
export const deps = buildDeps(undefined, undefined, { shareInFlightAnswers: true });
// Read the admin secret during cold start rather than on the first admin request.
void deps.adminKey().catch(() => undefined);

/**
 * The proxy, in the order of docs/behaviour.md ("Processing order"): authenticate → rate limit → validate →
 * budget → resolve key → cache → forward → record. Store reads for the first steps are
 * started together (one round trip); rows are written after the response has
 * gone out, and the invocation ends only once they are (`requestEnd`).
 */
export const handler = middy(forwardUpstream(deps), {
  executionMode: executionModeStreamifyResponse,
  // Only this invocation's own rows: concurrent requests (local server) don't wait for each other.
  requestEnd: async (request) => pipelineData(request.event as object)?.work.drain(),
})
  .use(answerErrors(deps))
  .use(routeRequest(deps))
  .use(startLookups(deps))
  .use(authenticate(deps))
  .use(enforceRateLimit(deps))
  .use(validateBody(deps))
  .use(enforceBudget(deps))
  .use(resolveProviderKey(deps))
  .use(serveFromCache(deps));
