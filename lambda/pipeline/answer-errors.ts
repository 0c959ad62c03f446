import type { Deps } from '../deps';
import { ProxyError } from '../errors';
import { describeError } from '../logger';
import { chatDialect } from '../providers/dialects/chat';
import type { ProxyResponse } from '../http/response';
import { finishResponse } from './finish-response';
import { pipelineData, type Middleware } from './middy-types';

/**
 * The one place errors become responses: a typed error keeps its status and
 * message, in the endpoint's own error shape; anything else is a 500 whose
 * details stay in the log.
 */
export function answerErrors(deps: Deps): Middleware {
  return {
    onError: function answerError(request): ProxyResponse {
      const data = pipelineData(request.event);
      const dialect = data?.dialect ?? chatDialect;
      const error = request.error;
      const known = error instanceof ProxyError ? error : undefined;
      if (!known || known.status >= 500) {
        deps.log.error('request failed', { request_id: data?.incoming.id, status: known?.status ?? 500, ...describeError(error) });
      }
      const status = known?.status ?? 500;
      const message = known?.message ?? 'Internal error in the proxy. The request id is in the x-proxy-request-id header.';
      const response: ProxyResponse = {
        statusCode: status,
        headers: { 'content-type': 'application/json', ...known?.details.headers },
        body: dialect.errorBody({ status, message, param: known?.details.param, code: known?.details.code }),
      };
      return finishResponse(data, response);
    },
  };
}
