import { randomBytes } from 'node:crypto';
import type { AuditAction, AuditEntry, AuditValue } from '../audit/ports';
import type { Deps } from '../wiring/deps';
import type { IncomingRequest } from '../http/request';
import { describeError } from '../base/logger';
import type { ApiCall, ManageCall } from './route-types';

/** One change as a route describes it: what, to which thing, and the setting before and after (never a secret). */
export interface Change {
  action: AuditAction;
  target: string;
  before?: AuditValue;
  after?: AuditValue;
}

/** Who made a change: the caller of an account route, or the admin key acting on an account. */
export interface ChangeAuthor {
  accountId: string;
  actor: string;
  actorName?: string;
}

/**
 * Appends the change to the account's audit log, after the change itself was made (docs/people.md).
 * Should the store refuse the entry, the change stands and the entry goes to the log line instead,
 * whole: it holds no secret, and the log is what keeps it then.
 */
export async function recordChange(
  deps: Deps,
  request: IncomingRequest,
  author: ChangeAuthor,
  change: Change,
): Promise<void> {
  const entry: AuditEntry = {
    accountId: author.accountId,
    id: randomBytes(8).toString('hex'),
    at: new Date(deps.now()).toISOString(),
    actor: author.actor,
    actorName: author.actorName,
    address: request.sourceIp,
    ...change,
  };
  await deps.audit.append(entry).catch((error: unknown) => {
    deps.log.error('audit entry not written; it is kept in this line', { entry, ...describeError(error) });
  });
}

/** The change made by the caller of an account route. */
export const recordCallerChange = (call: ManageCall, change: Change) =>
  recordChange(call.deps, call.request, call.caller, change);

/** The change made with the admin key, to `accountId`. */
export const recordAdminChange = (call: ApiCall, accountId: string, change: Change) =>
  recordChange(call.deps, call.request, { accountId, actor: 'admin-key' }, change);
