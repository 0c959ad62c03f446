import type { Deps } from '../wiring/deps';
import { MethodNotAllowedError, NotFoundError, StoreUnavailableError } from '../base/errors';
import type { IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import { adminRoutes } from './admin-routes';
import { alertRoutes } from './alert-routes';
import { auditRoutes } from './audit-routes';
import { groupRoleRoutes } from './group-role-routes';
import { signInRoutes } from './sign-in-routes';
import { budgetRoutes } from './budget-routes';
import { requireAdmin, requireCaller, requireRole } from './authorize';
import { healthRoutes } from './health-routes';
import { keyRoutes } from './key-routes';
import { logRoutes } from './log-routes';
import { priceRoutes } from './price-routes';
import { fallbackRoutes } from './fallback-routes';
import type { ApiRoute } from './route-types';
import { statsRoutes } from './stats-routes';
import { tokenRoutes } from './token-routes';
import { tokenSettingRoutes } from './token-settings';

/** Every route of the management API; each path is one of `API_PATHS`. */
export const API_ROUTES: readonly ApiRoute[] = [
  ...healthRoutes,
  ...adminRoutes,
  ...keyRoutes,
  ...logRoutes,
  ...statsRoutes,
  ...tokenRoutes,
  ...tokenSettingRoutes,
  ...budgetRoutes,
  ...priceRoutes,
  ...fallbackRoutes,
  ...alertRoutes,
  ...auditRoutes,
  ...signInRoutes,
  ...groupRoleRoutes,
];

/** A broken percent-encoding matches no route (a 404), rather than throwing. */
function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.replace(/\/+$/, '').split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      if (!got[i]) return undefined;
      const value = safeDecode(got[i]);
      if (value === undefined) return undefined;
      params[want[i].slice(1)] = value;
    } else if (want[i] !== got[i]) return undefined;
  }
  return params;
}

/**
 * Errors are typed (`lambda/base/errors.ts`) and answered in the API's own shape (error-shape.ts). A store
 * outage, during the caller's check or the route's own work, is a 503 with `Retry-After`
 * (docs/errors-and-limits.md); anything else untyped stays a 500.
 */
async function answerRoute(
  deps: Deps,
  route: ApiRoute,
  request: IncomingRequest,
  params: Record<string, string>,
): Promise<ProxyResponse> {
  if (route.access === 'manage') {
    const { caller, session } = await requireCaller(deps, request);
    requireRole(caller, route.role);
    return route.handle({ deps, request, params, caller, session });
  }
  if (route.access === 'admin') await requireAdmin(deps, request);
  return route.handle({ deps, request, params });
}

/** The management API's router (docs/management-api.md): admin routes, account routes scoped to the caller's account, health. */
export async function routeApi(deps: Deps, request: IncomingRequest): Promise<ProxyResponse> {
  let pathMatched = false;
  for (const route of API_ROUTES) {
    const params = match(route.path, request.path);
    if (!params) continue;
    pathMatched = true;
    if (route.method !== request.method) continue;
    return await answerRoute(deps, route, request, params).catch((error: unknown) => {
      throw deps.isStoreOutage(error) ? new StoreUnavailableError(error, 'management') : error;
    });
  }
  if (pathMatched) {
    const allowed = API_ROUTES.filter((r) => match(r.path, request.path))
      .map((r) => r.method)
      .join(', ');
    throw new MethodNotAllowedError(request.method, allowed);
  }
  throw new NotFoundError(`No API route for ${request.method} ${request.path}.`);
}
