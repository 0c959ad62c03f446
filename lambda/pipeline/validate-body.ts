import { cacheHeaderProblem } from '../cache/cache-request';
import type { Deps } from '../deps';
import { UnsupportedMediaTypeError, ValidationError } from '../errors';
import { proxyState, type Middleware } from './middy-types';

/** Step 5: the body fields the spec requires, and the proxy's own request headers. */
export function validateBody(_deps: Deps): Middleware {
  return {
    before: function validateBody(request) {
      const state = proxyState(request.event);
      // Content-type application/json (README, "Decisions where the spec is silent"). A missing header is read as JSON, and so is curl's
      // default form type when the body is a JSON object (`curl -d '{…}'`); another type is refused.
      const contentType = state.request.headers['content-type'];
      const curlDefault = contentType !== undefined && /^application\/x-www-form-urlencoded\b/i.test(contentType.trim()) && state.body !== undefined;
      if (state.endpoint.dialect.requestBody === 'json' && contentType && !curlDefault && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim())) throw new UnsupportedMediaTypeError(contentType);
      if (!state.validation.ok) throw new ValidationError(state.validation.message, state.validation.param || undefined);
      const cacheProblem = cacheHeaderProblem(state.cache);
      if (cacheProblem) throw new ValidationError(cacheProblem.message, cacheProblem.param);
    },
  };
}
