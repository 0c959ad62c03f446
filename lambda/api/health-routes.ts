import { jsonResponse } from '../http/response';
import { VERSION } from '../version';
import type { ApiRoute } from './route-types';

export const healthRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: '/api/health',
    access: 'public',
    handle: () => jsonResponse(200, { status: 'ok', version: VERSION }),
  },
];
