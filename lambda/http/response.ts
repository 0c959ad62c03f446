import type { Readable } from 'node:stream';
import { VERSION } from '../base/version';

/** What middy's streaming mode writes: a status/headers prelude, then the body. */
export interface ProxyResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string | Readable;
}

/** Headers every response carries, whatever produced it. */
export function withStandardHeaders(
  response: ProxyResponse,
  requestId: string,
  extra: Record<string, string> = {},
): ProxyResponse {
  response.headers = { ...response.headers, ...extra, 'x-proxy-request-id': requestId, 'x-proxy-version': VERSION };
  return response;
}

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): ProxyResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? '' : JSON.stringify(body),
  };
}
