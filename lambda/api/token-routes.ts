import { issueToken } from '../auth/issue';
import * as z from 'zod/mini';
import { NotFoundError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { budgetJson } from './budget-routes';
import { jsonBody, parseBody, roleField, strictBody, tokenName } from './request-body';
import { limitsJson, ownToken } from './token-settings';
import { defaultsJson } from '../account-settings/failover-settings';
import { requireRole } from './authorize';
import type { Scope } from '../auth/ports';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';
import { recordCallerChange } from './audit-trail';

/**
 * `{"name": "…", "role": "viewer"}`, both optional: without a role, an app token that can proxy but not
 * manage; with one, a management token of that role (docs/people.md), which only an admin may issue.
 */
const appTokenBody = strictBody({ name: z.optional(tokenName), role: z.optional(roleField) }, '"name" and "role"');

/** The caller's own account's tokens: list (never the secret, with each one's budget), create a proxy-only app token, revoke. */
export const tokenRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.tokens,
    access: 'manage',
    role: 'viewer',
    async handle({ deps, caller }) {
      const [tokens, budgets] = await Promise.all([
        deps.accounts.listTokens(caller.accountId),
        deps.budgets.listBudgets(caller.accountId, 'token', deps.now()),
      ]);
      const budgetByToken = new Map(
        budgets.flatMap((status) =>
          status.subject.kind === 'token' ? [[status.subject.tokenId, status] as const] : [],
        ),
      );
      tokens.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      return jsonResponse(200, {
        tokens: tokens.map((t) => {
          const budget = budgetByToken.get(t.tokenId);
          return {
            token_id: t.tokenId,
            name: t.name ?? '',
            scopes: t.scopes,
            created_at: t.createdAt,
            last_used_at: t.lastUsedAt,
            revoked_at: t.revokedAt,
            // The token this request was made with, so the dashboard can warn before revoking it.
            current: t.tokenId === caller.tokenId,
            budget: budget ? budgetJson(budget) : null,
            tags: t.tags ?? {},
            limits: limitsJson(t.limits),
            fallbacks: defaultsJson(t.fallbacks),
            role: t.scopes.includes('manage') ? (t.role ?? 'admin') : null,
            created_by: t.createdBy ?? null,
          };
        }),
      });
    },
  },
  {
    method: 'POST',
    path: API_PATHS.tokens,
    access: 'manage',
    role: 'member',
    async handle(call) {
      const { name, role } = parseBody(jsonBody(call), appTokenBody);
      if (role) requireRole(call.caller, 'admin');
      const scopes: Scope[] = role ? ['manage'] : ['proxy'];
      const issued = await issueToken(call.deps.accounts, {
        accountId: call.caller.accountId,
        name,
        scopes,
        role,
        createdBy: call.caller.actor,
        now: new Date(call.deps.now()),
      });
      await recordCallerChange(call, {
        action: 'token.issued',
        target: issued.tokenId,
        after: { name: name ?? null, scopes, role: role ?? null },
      });
      return jsonResponse(201, { token_id: issued.tokenId, token: issued.token, scopes, ...(role ? { role } : {}) });
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.token,
    access: 'manage',
    role: 'member',
    async handle(call) {
      const { deps, caller } = call;
      // A token id of another account is "not found" here, never revoked.
      const { tokenId } = await ownToken(call);
      if (!(await deps.accounts.revokeToken(caller.accountId, tokenId, new Date(deps.now()).toISOString()))) {
        throw new NotFoundError(`No token ${tokenId} in this account.`);
      }
      await recordCallerChange(call, { action: 'token.revoked', target: tokenId });
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
];
