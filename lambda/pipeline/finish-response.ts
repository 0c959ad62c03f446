import { withStandardHeaders, type ProxyResponse } from '../http/response';
import type { PipelineData } from './middy-types';
import { rateLimitHeaders } from './state';

/** Every response leaves through here: request id, version, CORS and rate-limit headers. */
export function finishResponse(data: PipelineData | undefined, response: ProxyResponse, requestId = data?.incoming.id ?? 'unknown'): ProxyResponse {
  return withStandardHeaders(response, requestId, { ...data?.cors, ...rateLimitHeaders(data?.proxy?.rateLimit) });
}
