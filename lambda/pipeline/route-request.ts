import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { BackgroundWork } from '../base/background-work';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError } from '../base/errors';
import { corsHeaders, preflightHeaders } from '../http/cors';
import { fromFunctionUrlEvent, MAX_BODY_BYTES, type IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import { serveDashboard } from '../http/serve-dashboard';
import { chatDialect } from '../providers/dialects/chat';
import { messagesDialect } from '../providers/dialects/messages';
import { endpointPaths, resolveProxyPath, type Provider } from '../providers/registry';
import { finishResponse } from './finish-response';
import { refuseAtTheEdge } from './edge-checks';
import { readProxyRequest } from './read-proxy-request';
import type { ProxyRequest, Received } from './state';
import type { Step } from './step';

export const PROXY_BASE = '/api/proxy';

export interface RouteOptions {
  corsAllowedOrigins: readonly string[];
  /** The process's after-response work; each request gets its own scope of it. */
  background: BackgroundWork;
}

export interface OutsideOptions {
  corsAllowedOrigins: readonly string[];
  /** The management API's entry (api/handler.ts): its answer, or a typed error. */
  api: (request: IncomingRequest) => Promise<ProxyResponse>;
  /** Renders any error of the management API in its own shape (api/error-shape.ts). */
  answerApiError: (state: Received, error: unknown) => ProxyResponse | Promise<ProxyResponse>;
}

/** Decodes the event and learns where it leads, before any step runs: an error answer needs this much. */
export function receiveRequest({
  corsAllowedOrigins,
  background,
}: RouteOptions): (event: APIGatewayProxyEventV2) => Received {
  return function receive(event) {
    const request = fromFunctionUrlEvent(event);
    const isProxyPath = request.path.startsWith(`${PROXY_BASE}/`);
    const route = isProxyPath ? resolveProxyPath(request.path.slice(PROXY_BASE.length), request.method) : undefined;
    const provider =
      route &&
      ('found' in route
        ? route.found.provider
        : 'wrongMethod' in route
          ? route.wrongMethod.provider
          : 'unsafe' in route
            ? route.unsafe.provider
            : route.notOffered.provider);
    return {
      request,
      route,
      // An unknown proxy path still answers in the style its client most likely speaks.
      dialect:
        route && 'found' in route
          ? route.found.endpoint.dialect
          : (provider?.dialect ?? (isProxyPath && request.path.endsWith('/messages') ? messagesDialect : chatDialect)),
      cors: corsHeaders(request.headers.origin, corsAllowedOrigins),
      work: background.scope(),
    };
  };
}

/**
 * What the function URL answers before the proxy pipeline runs: CORS preflights, the management
 * API (every `/api/` path but the proxy's, in the API's own error shape) and the dashboard's files.
 * Undefined for a proxy request, which goes on down the pipeline.
 */
export function answerOutsideProxy({
  corsAllowedOrigins,
  api,
  answerApiError,
}: OutsideOptions): (state: Received) => Promise<ProxyResponse | undefined> {
  return async function outside(state) {
    const { request } = state;
    if (request.method === 'OPTIONS') return finishResponse(state, preflight(request.headers, corsAllowedOrigins));
    if (request.path.startsWith(`${PROXY_BASE}/`)) return undefined;
    if (request.path.startsWith('/api/')) {
      const answered = await api(request).catch((error: unknown) => answerApiError(state, error));
      return finishResponse(state, answered);
    }
    const dashboard = serveDashboard(request);
    if (!dashboard) throw new NotFoundError(`No route for ${request.method} ${request.path}.`);
    return finishResponse(state, dashboard);
  };
}

/** Step 1 (docs/behaviour.md, "Processing order"): what a proxy request is, read without I/O. */
export function routeRequest(): Step<Received, ProxyRequest> {
  return {
    name: 'route',
    run(state) {
      const { request, route } = state;
      if (request.body.length > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
      if (!route || 'unsafe' in route) throw new NotFoundError(unknownPathMessage(request.path));
      if ('notOffered' in route) throw new NotFoundError(notOfferedMessage(request, route.notOffered.provider));
      if ('wrongMethod' in route) throw new MethodNotAllowedError(request.method, route.wrongMethod.allowed);
      const proxyRequest = readProxyRequest(request, route.found);
      refuseAtTheEdge(request, proxyRequest);
      return proxyRequest;
    },
  };
}

/** Names the endpoints, derived from the providers' data, so a typo is fixed without reading the docs. */
function unknownPathMessage(path: string): string {
  const endpoints = endpointPaths().map((line) => line.replace(' ', ` ${PROXY_BASE}`));
  return `Unknown proxy path ${path.slice(0, 200)}. Endpoints: ${endpoints.join(', ')}; any other plain path below ${PROXY_BASE}/prov-x/ is forwarded to that provider.`;
}

/** The operations a provider that forwards nothing else offers, so a client learns what it may call. */
function notOfferedMessage(request: IncomingRequest, provider: Provider): string {
  const offered = endpointPaths()
    .filter((line) => line.split(' ')[1].startsWith(`/${provider.id}/`))
    .map((line) => line.replace(' ', ` ${PROXY_BASE}`));
  return `${request.method} ${request.path.slice(0, 200)} is not an operation the proxy forwards to ${provider.displayName}. Operations: ${offered.join(', ')}.`;
}

function preflight(headers: Record<string, string | undefined>, allowlist: readonly string[]): ProxyResponse {
  const allowed = headers.origin ? preflightHeaders(headers.origin, allowlist) : undefined;
  if (!allowed) return { statusCode: 403, headers: { 'content-type': 'text/plain' }, body: 'Origin not allowed' };
  const requested = headers['access-control-request-headers'];
  return {
    statusCode: 204,
    headers: requested ? { ...allowed, 'access-control-allow-headers': requested } : allowed,
    body: '',
  };
}
