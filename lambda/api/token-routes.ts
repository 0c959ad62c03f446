import { issueToken } from '../auth/issue';
import * as z from 'zod/mini';
import { NotFoundError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { budgetJson } from './budget-routes';
import { jsonBody, parseBody, strictBody, tokenName } from './request-body';
import { limitsJson } from './token-settings';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';

/** `{"name": "…"}`, optional. */
const appTokenBody = strictBody({ name: z.optional(tokenName) }, '"name"');

/** The caller's own account's tokens: list (never the secret, with each one's budget), create a proxy-only app token, revoke. */
export const tokenRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.tokens,
    access: 'manage',
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
          };
        }),
      });
    },
  },
  {
    method: 'POST',
    path: API_PATHS.tokens,
    access: 'manage',
    async handle(call) {
      const { name } = parseBody(jsonBody(call), appTokenBody);
      const issued = await issueToken(call.deps.accounts, {
        accountId: call.caller.accountId,
        name,
        scopes: ['proxy'],
        now: new Date(call.deps.now()),
      });
      return jsonResponse(201, { token_id: issued.tokenId, token: issued.token, scopes: ['proxy'] });
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.token,
    access: 'manage',
    async handle({ deps, params, caller }) {
      const accountId = caller.accountId;
      // A token id of another account is "not found" here, never revoked.
      if (
        !params.tokenId.startsWith(`${accountId}_`) ||
        !(await deps.accounts.revokeToken(accountId, params.tokenId, new Date(deps.now()).toISOString()))
      ) {
        throw new NotFoundError(`No token ${params.tokenId} in this account.`);
      }
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
];
