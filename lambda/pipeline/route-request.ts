import type { Deps } from '../deps';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError } from '../errors';
import { corsHeaders, preflightHeaders } from '../http/cors';
import { fromFunctionUrlEvent, MAX_BODY_BYTES } from '../http/request';
import type { ProxyResponse } from '../http/response';
import { handleApi } from '../api/router';
import { serveDashboard } from '../http/serve-dashboard';
import { chatDialect } from '../providers/dialects/chat';
import { messagesDialect } from '../providers/dialects/messages';
import { endpointPaths, resolveProxyPath } from '../providers/registry';
import { finishResponse } from './finish-response';
import { setPipelineData, type Middleware, type PipelineData } from './middy-types';
import { readProxyRequest } from './read-proxy-request';

export const PROXY_BASE = '/api/proxy';

/**
 * First step: decode the event and decide what it is. CORS preflights, the
 * management API and the dashboard are answered here; proxy requests go on
 * down the pipeline.
 */
export function routeRequest(deps: Deps): Middleware {
  return {
    before: async function routeRequest(request): Promise<ProxyResponse | void> {
      const incoming = fromFunctionUrlEvent(request.event);
      const origin = incoming.headers.origin;
      const isProxyPath = incoming.path.startsWith(`${PROXY_BASE}/`);
      const route = isProxyPath ? resolveProxyPath(incoming.path.slice(PROXY_BASE.length), incoming.method) : undefined;
      const provider = route && ('found' in route ? route.found.provider : 'wrongMethod' in route ? route.wrongMethod.provider : route.unsafe.provider);
      const data: PipelineData = {
        incoming,
        // An unknown proxy path still answers in the style its client most likely speaks.
        dialect: route && 'found' in route ? route.found.endpoint.dialect : (provider?.dialect ?? (isProxyPath && incoming.path.endsWith('/messages') ? messagesDialect : chatDialect)),
        cors: corsHeaders(origin, deps.config.corsAllowedOrigins),
        work: deps.background.scope(),
      };
      setPipelineData(request.event, data);

      if (incoming.method === 'OPTIONS') return finishResponse(data, preflight(incoming.headers, deps.config.corsAllowedOrigins));
      if (incoming.body.length > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
      if (!isProxyPath) {
        const response = incoming.path.startsWith('/api/') ? await handleApi(deps, incoming) : serveDashboard(incoming);
        if (!response) throw new NotFoundError(`No route for ${incoming.method} ${incoming.path}.`);
        return finishResponse(data, response);
      }
      if (!route || 'unsafe' in route) throw new NotFoundError(unknownPathMessage(incoming.path));
      if ('wrongMethod' in route) throw new MethodNotAllowedError(incoming.method, route.wrongMethod.allowed);
      data.proxy = readProxyRequest(incoming, route.found, data.work);
    },
  };
}

/** Names the endpoints, derived from the providers' data, so a typo is fixed without reading the docs. */
function unknownPathMessage(path: string): string {
  const endpoints = endpointPaths().map((line) => line.replace(' ', ` ${PROXY_BASE}`));
  return `Unknown proxy path ${path.slice(0, 200)}. Endpoints: ${endpoints.join(', ')}; any other plain path below ${PROXY_BASE}/prov-x/ is forwarded to that provider.`;
}

function preflight(headers: Record<string, string | undefined>, allowlist: readonly string[]): ProxyResponse {
  const allowed = headers.origin ? preflightHeaders(headers.origin, allowlist) : undefined;
  if (!allowed) return { statusCode: 403, headers: { 'content-type': 'text/plain' }, body: 'Origin not allowed' };
  const requested = headers['access-control-request-headers'];
  return { statusCode: 204, headers: requested ? { ...allowed, 'access-control-allow-headers': requested } : allowed, body: '' };
}
