import { managementErrors } from '../api/error-shape';
import { createApiHandler } from '../api/handler';
import type { Deps } from './deps';
import { answerErrors } from '../pipeline/answer-errors';
import { authenticate } from '../pipeline/authenticate';
import { enforceBudget } from '../pipeline/enforce-budget';
import { enforceModelList } from '../pipeline/enforce-model-list';
import { enforceRateLimit } from '../pipeline/enforce-rate-limit';
import { forwardUpstream } from '../pipeline/forward-upstream';
import { identify } from '../pipeline/identify';
import { Pipeline, streamingHandler } from '../pipeline/pipeline';
import { recordUsage } from '../pipeline/record';
import { resolveProviderKey } from '../pipeline/resolve-provider-key';
import { answerOutsideProxy, receiveRequest, routeRequest } from '../pipeline/route-request';
import { serveFromCache } from '../pipeline/serve-from-cache';
import { validateBody } from '../pipeline/validate-body';

/** Where the proxied paths start (the rest is the management API and the dashboard), for the local server. */
export { PROXY_BASE } from '../pipeline/route-request';

/**
 * The proxy as a Middy handler in response-streaming mode, over the dependencies it is given
 * (the Lambda entry's, the local server's, a test's). Importing this module builds nothing.
 *
 * The steps in the order of docs/behaviour.md ("Processing order"); each one's input is what
 * the ones before it proved, so this order is checked when it compiles. Store reads for the
 * first steps are started together (one round trip); rows are written after the response has
 * gone out, and the invocation ends only once they are.
 */
export function createProxyHandler(deps: Deps) {
  const answerApiError = answerErrors(deps.log, deps.isStoreOutage, deps.failedSignIns, managementErrors);
  return streamingHandler({
    // The management API and the dashboard, before the proxy's first step; the API in its own error shape.
    outside: answerOutsideProxy({
      corsAllowedOrigins: deps.config.corsAllowedOrigins,
      api: createApiHandler(deps),
      answerApiError,
    }),
    pipeline: proxyPipeline(deps),
    handle: forwardUpstream(deps), // 10. forward
    answerError: answerErrors(deps.log, deps.isStoreOutage, deps.failedSignIns),
    record: recordUsage(deps), // 11. record, once the request has ended, whichever way
  });
}

/** Steps 1–9 of docs/behaviour.md ("Processing order"), each given the dependencies it uses. */
export function proxyPipeline(deps: Deps) {
  const { corsAllowedOrigins } = deps.config;
  return Pipeline.start(receiveRequest({ corsAllowedOrigins, background: deps.background }))
    .then(routeRequest()) // 1. route
    .then(identify(deps)) // 2. identify the token; its store reads start
    .then(authenticate()) // 3. authenticate
    .then(enforceRateLimit()) // 4. rate limit
    .then(validateBody()) // 5. validate
    .then(enforceModelList()) // 6. the token's model list
    .then(enforceBudget(deps)) // 7. budget
    .then(resolveProviderKey(deps)) // 8. resolve the provider key
    .then(serveFromCache(deps)); // 9. cache
}
