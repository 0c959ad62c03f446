import { budgetHeaders } from '../budgets/remaining-header';
import { withStandardHeaders, type ProxyResponse } from '../http/response';
import type { PipelineData } from './middy-types';
import { rateLimitHeaders } from './state';

/** Every response leaves through here: request id, version, CORS, rate-limit and budget headers. */
export function finishResponse(data: PipelineData | undefined, response: ProxyResponse, requestId = data?.incoming.id ?? 'unknown'): ProxyResponse {
  return withStandardHeaders(response, requestId, { ...data?.cors, ...rateLimitHeaders(data?.proxy?.rateLimit), ...budgetHeaders(data?.proxy?.budgets) });
}
