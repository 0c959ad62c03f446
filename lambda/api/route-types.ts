import { ValidationError } from '../errors';
import type { Deps } from '../deps';
import type { IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import type { TokenRecord } from '../store/ports';

export type Access = 'public' | 'admin' | 'manage';

export interface ApiCall {
  deps: Deps;
  request: IncomingRequest;
  params: Record<string, string>;
  /** The signed-in token, for `manage` routes: every read and write is scoped to its account. */
  caller?: TokenRecord;
}

export interface ApiRoute {
  method: string;
  /** Path pattern with `:name` segments, e.g. `/api/keys/:provider`. */
  path: string;
  access: Access;
  handle(call: ApiCall): Promise<ProxyResponse> | ProxyResponse;
}

/** The JSON body of a management call; a missing body is `{}`, anything but an object is a 400. */
export function jsonBody(call: ApiCall): Record<string, unknown> {
  const text = call.request.body.toString('utf8').trim();
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}
