import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import type { GroupRole } from '../people/ports';
import { unsafeCharacterIn } from '../base/plain-text';
import { recordAdminChange, recordCallerChange, type Change } from './audit-trail';
import { API_PATHS } from './paths';
import { jsonBody, parseBody, roleField, strictBody } from './request-body';
import type { ApiCall, ApiRoute } from './route-types';

const GROUP_MAX_CHARS = 256;

/** A group as the identity provider names it: plain text, at most 256 characters. */
function groupParam({ params }: ApiCall): string {
  const group = params.group;
  const unsafe = unsafeCharacterIn(group);
  if (!group || group.length > GROUP_MAX_CHARS || unsafe)
    throw new ValidationError(
      `group must be the group's name, 1 to ${GROUP_MAX_CHARS} characters of plain text.`,
      'group',
    );
  return group;
}

const roleBody = strictBody({ role: roleField }, '"role"');

const groupRoleJson = (mapping: GroupRole) => ({
  group: mapping.group,
  role: mapping.role,
  updated_at: mapping.updatedAt,
});

/** Sets a group's role in an account; the change as the audit log keeps it. */
async function mapGroup(call: ApiCall, accountId: string): Promise<{ mapping: GroupRole; change: Change }> {
  const group = groupParam(call);
  const { role } = parseBody(jsonBody(call), roleBody);
  const mapping = { accountId, group, role, updatedAt: new Date(call.deps.now()).toISOString() };
  const before = await call.deps.groupRoles.put(mapping);
  return {
    mapping,
    change: { action: 'role.mapped', target: `group:${group}`, before: before?.role ?? null, after: role },
  };
}

/** Which identity-provider group holds which role in the account (docs/people.md). */
export const groupRoleRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.groupRoles,
    access: 'manage',
    role: 'viewer',
    async handle({ deps, caller }) {
      const mappings = await deps.groupRoles.list(caller.accountId);
      mappings.sort((a, b) => a.group.localeCompare(b.group));
      return jsonResponse(200, { roles: mappings.map(groupRoleJson) });
    },
  },
  {
    method: 'PUT',
    path: API_PATHS.groupRole,
    access: 'manage',
    role: 'admin',
    async handle(call) {
      const { mapping, change } = await mapGroup(call, call.caller.accountId);
      await recordCallerChange(call, change);
      return jsonResponse(200, groupRoleJson(mapping));
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.groupRole,
    access: 'manage',
    role: 'admin',
    async handle(call) {
      const group = groupParam(call);
      const removed = await call.deps.groupRoles.remove(call.caller.accountId, group);
      if (!removed) throw new NotFoundError(`The group ${group} has no role in this account.`);
      await recordCallerChange(call, { action: 'role.unmapped', target: `group:${group}`, before: removed.role });
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
  {
    // The first admin of an account that signs in needs a group mapped before anyone can sign in.
    method: 'PUT',
    path: API_PATHS.adminGroupRole,
    access: 'admin',
    async handle(call) {
      const { accountId } = call.params;
      if (!(await call.deps.accounts.accountExists(accountId))) throw new NotFoundError(`No account ${accountId}.`);
      const { mapping, change } = await mapGroup(call, accountId);
      await recordAdminChange(call, accountId, change);
      return jsonResponse(200, groupRoleJson(mapping));
    },
  },
];
