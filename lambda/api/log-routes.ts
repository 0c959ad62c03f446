import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { ENDPOINT_KINDS, type EndpointKind } from '../providers/types';
import { withUnsafeEscaped } from '../base/plain-text';
import { keyProblem, valueProblem, type Tags } from '../tags/tags';
import type { LogQuery } from '../usage/usage-row';
import { logCsvStream } from './log-csv';
import { isoParam } from './iso-param';
import { refuseUnsafeText } from './request-body';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';

/** `tag=team=search`, repeatable: every one must match (docs/tags.md). */
function readTagFilters(query: URLSearchParams): Tags | undefined {
  const filters = query.getAll('tag');
  if (filters.length === 0) return undefined;
  const tags: Tags = {};
  for (const filter of filters) {
    const equals = filter.indexOf('=');
    if (equals < 0)
      throw new ValidationError(
        `tag must be key=value (e.g. tag=team=search), got ${JSON.stringify(withUnsafeEscaped(filter.slice(0, 100)))}.`,
        'tag',
      );
    const key = filter.slice(0, equals);
    const value = filter.slice(equals + 1);
    const problem = keyProblem(key) ?? valueProblem(key, value);
    if (problem) throw new ValidationError(`tag: ${problem}.`, 'tag');
    if (Object.hasOwn(tags, key) && tags[key] !== value)
      throw new ValidationError(
        `tag: "${key}" is given twice with different values; a row has one value per key.`,
        'tag',
      );
    tags[key] = value;
  }
  return tags;
}

/** The filters a log query takes as text: matched against rows, and shown back by the dashboard. */
const TEXT_FILTERS = ['cursor', 'provider', 'model', 'requester', 'token_id'] as const;

export function readLogQuery(query: URLSearchParams): LogQuery {
  for (const field of TEXT_FILTERS) refuseUnsafeText(field, query.get(field));
  const limit = Number(query.get('limit') ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new ValidationError('limit must be an integer from 1 to 500.', 'limit');
  const cached = query.get('cached');
  const status = query.get('status');
  if (cached !== null && cached !== 'true' && cached !== 'false')
    throw new ValidationError('cached must be true or false.', 'cached');
  if (status !== null && status !== 'ok' && status !== 'error')
    throw new ValidationError('status must be ok or error.', 'status');
  const kind = query.get('kind') || undefined;
  if (kind !== undefined && !ENDPOINT_KINDS.includes(kind as EndpointKind))
    throw new ValidationError(`kind must be one of ${ENDPOINT_KINDS.join(', ')}.`, 'kind');
  return {
    limit,
    cursor: query.get('cursor') || undefined,
    from: isoParam(query, 'from')?.toISOString(),
    to: isoParam(query, 'to')?.toISOString(),
    provider: query.get('provider') || undefined,
    kind: kind as EndpointKind | undefined,
    model: query.get('model') || undefined,
    requester: query.get('requester') || undefined,
    token_id: query.get('token_id') || undefined,
    tags: readTagFilters(query),
    cached: cached === null ? undefined : cached === 'true',
    status: (status as LogQuery['status']) ?? undefined,
  };
}

export const logRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.logs,
    access: 'manage',
    async handle({ deps, request, caller }) {
      const page = await deps.usageLog.query(caller.accountId, readLogQuery(request.query));
      return jsonResponse(200, { items: page.items, next_cursor: page.nextCursor });
    },
  },
  {
    // Same filters as /api/logs, every matching row (no page limit), streamed as the store is read.
    method: 'GET',
    path: API_PATHS.logsCsv,
    access: 'manage',
    async handle({ deps, request, caller }) {
      const { limit: _limit, cursor: _cursor, ...filters } = readLogQuery(request.query);
      return {
        statusCode: 200,
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': 'attachment; filename="usage-logs.csv"',
          'cache-control': 'no-store',
        },
        body: await logCsvStream(deps.usageLog, caller.accountId, filters),
      };
    },
  },
  {
    method: 'GET',
    path: API_PATHS.logRow,
    access: 'manage',
    async handle({ deps, params, caller }) {
      // Looked up in the caller's own account only: another account's id is simply not found.
      const row = await deps.usageLog.find(caller.accountId, params.id);
      if (!row) throw new NotFoundError(`No request ${params.id} in this account.`);
      return jsonResponse(200, row);
    },
  },
];
