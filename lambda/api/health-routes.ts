import { jsonResponse } from '../http/response';
import { VERSION } from '../base/version';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';

export const healthRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.health,
    access: 'public',
    handle: () => jsonResponse(200, { status: 'ok', version: VERSION }),
  },
];
