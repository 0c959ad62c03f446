import type { Deps } from '../wiring/deps';
import type { IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import type { Caller, Role } from '../auth/roles';
import type { Session } from '../people/session';
import type { ApiPath } from './paths';

export interface ApiCall {
  deps: Deps;
  request: IncomingRequest;
  params: Record<string, string>;
}

/** A call to a `manage` route: the token or person signed in, to whose account every read and write is scoped. */
export interface ManageCall extends ApiCall {
  caller: Caller;
  /** A signed-in person's session, as the caller's check opened it; absent for a token. */
  session?: Session;
}

/** What a route's handler gives back: its response, now or later. */
type RouteResponse = Promise<ProxyResponse> | ProxyResponse;

interface RoutePattern {
  method: string;
  /** Path pattern with `:name` segments, e.g. `/api/keys/:provider`: one of the API's paths. */
  path: ApiPath;
}

/**
 * A route; a `manage` route's handler receives the caller, checked before it runs, and names the
 * least role that may call it (docs/people.md): the router refuses any other with a 403.
 */
export type ApiRoute =
  | (RoutePattern & { access: 'public' | 'admin'; handle(call: ApiCall): RouteResponse })
  | (RoutePattern & { access: 'manage'; role: Role; handle(call: ManageCall): RouteResponse });
