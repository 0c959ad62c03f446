import { AUDIT_ACTIONS, type AuditAction, type AuditEntry, type AuditQuery } from '../audit/ports';
import { ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { isoParam } from './iso-param';
import { API_PATHS } from './paths';
import { refuseUnsafeText } from './request-body';
import type { ApiRoute } from './route-types';

const ACTION_ERROR = `action must be one of ${AUDIT_ACTIONS.join(', ')}.`;

function readAuditQuery(query: URLSearchParams): AuditQuery {
  for (const field of ['cursor', 'actor'] as const) refuseUnsafeText(field, query.get(field));
  const limit = Number(query.get('limit') ?? 100);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new ValidationError('limit must be an integer from 1 to 500.', 'limit');
  const cursor = query.get('cursor') || undefined;
  const action = query.get('action') || undefined;
  if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action))
    throw new ValidationError(ACTION_ERROR, 'action');
  return {
    limit,
    cursor,
    from: isoParam(query, 'from')?.toISOString(),
    to: isoParam(query, 'to')?.toISOString(),
    actor: query.get('actor') || undefined,
    action: action as AuditAction | undefined,
  };
}

/** An entry as `GET /api/audit` lists it (docs/people.md). */
export function auditJson(entry: AuditEntry) {
  return {
    id: entry.id,
    at: entry.at,
    actor: entry.actor,
    actor_name: entry.actorName ?? null,
    address: entry.address ?? null,
    action: entry.action,
    target: entry.target,
    before: entry.before ?? null,
    after: entry.after ?? null,
  };
}

export type AuditEntryJson = ReturnType<typeof auditJson>;

/** The actions an entry can record, for the dashboard's filter. */
export { AUDIT_ACTIONS };

/** The account's audit log: every management change, newest first, a page at a time. */
export const auditRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.audit,
    access: 'manage',
    role: 'viewer',
    async handle({ deps, request, caller }) {
      const page = await deps.audit.list(caller.accountId, readAuditQuery(request.query));
      return jsonResponse(200, { items: page.items.map(auditJson), next_cursor: page.nextCursor });
    },
  },
];
