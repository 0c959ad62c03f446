import type { Deps } from '../wiring/deps';
import { PayloadTooLargeError } from '../base/errors';
import { MAX_BODY_BYTES, type IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import { routeApi } from './router';

/**
 * The management API's entry in the function: the function URL hands it every `/api/` path but
 * the proxy's, before the proxy pipeline runs (pipeline/route-request.ts, `answerOutsideProxy`).
 * It answers, or throws a typed error that is rendered in the API's own shape (error-shape.ts).
 */
export function createApiHandler(deps: Deps): (request: IncomingRequest) => Promise<ProxyResponse> {
  return async function handleApi(request) {
    if (request.body.length > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
    return routeApi(deps, request);
  };
}
