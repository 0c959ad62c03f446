import type { Deps } from '../wiring/deps';
import type { IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import type { TokenRecord } from '../auth/ports';
import type { ApiPath } from './paths';

export interface ApiCall {
  deps: Deps;
  request: IncomingRequest;
  params: Record<string, string>;
}

/** A call to a `manage` route: the signed-in token, to which every read and write is scoped. */
export interface ManageCall extends ApiCall {
  caller: TokenRecord;
}

/** What a route's handler gives back: its response, now or later. */
type RouteResponse = Promise<ProxyResponse> | ProxyResponse;

interface RoutePattern {
  method: string;
  /** Path pattern with `:name` segments, e.g. `/api/keys/:provider`: one of the API's paths. */
  path: ApiPath;
}

/** A route; a `manage` route's handler receives the caller, checked before it runs. */
export type ApiRoute =
  | (RoutePattern & { access: 'public' | 'admin'; handle(call: ApiCall): RouteResponse })
  | (RoutePattern & { access: 'manage'; handle(call: ManageCall): RouteResponse });
