import { budgetHeaders } from '../budgets/remaining-header';
import { withStandardHeaders, type ProxyResponse } from '../http/response';
import { rateLimitHeaders, type Answering } from './state';

/** Every response leaves through here: request id, version, CORS, rate-limit and budget headers. */
export function finishResponse(state: Answering | undefined, response: ProxyResponse): ProxyResponse {
  return withStandardHeaders(response, state?.request.id ?? 'unknown', {
    ...state?.cors,
    ...rateLimitHeaders(state?.rateLimit),
    ...budgetHeaders(state?.budgets),
  });
}
