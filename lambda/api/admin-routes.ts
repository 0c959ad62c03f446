import * as z from 'zod/mini';
import { ALL_SCOPES, createAccount, issueToken } from '../auth/issue';
import { parseToken } from '../auth/proxy-token';
import { NotFoundError } from '../base/errors';
import { jsonResponse } from '../http/response';
import type { Scope } from '../auth/ports';
import { jsonBody, parseBody, strictBody, tokenName } from './request-body';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';

const SCOPES_ERROR = 'scopes must be a non-empty array of "proxy" and/or "manage".';

/** `{"name": "…"}`: an optional label (null is the same as none). */
const accountName = z.pipe(
  z.nullish(tokenName),
  z.transform((name) => name ?? undefined),
);
const accountBody = strictBody({ name: accountName }, '"name"');

/** `{"name": "…", "scopes": ["proxy", "manage"]}`: both optional; all scopes by default. */
const adminTokenBody = strictBody(
  {
    name: accountName,
    scopes: z.pipe(
      z.optional(
        z
          .array(z.enum(ALL_SCOPES, { error: SCOPES_ERROR }), { error: SCOPES_ERROR })
          .check(z.minLength(1, SCOPES_ERROR)),
      ),
      z.transform((scopes): Scope[] => (scopes ? [...new Set(scopes)] : [...ALL_SCOPES])),
    ),
  },
  '"name" and "scopes"',
);

/** Admin routes (bearer admin key): accounts and their tokens. */
export const adminRoutes: ApiRoute[] = [
  {
    method: 'POST',
    path: API_PATHS.adminAccounts,
    access: 'admin',
    async handle(call) {
      const { deps } = call;
      const { name } = parseBody(jsonBody(call), accountBody);
      const created = await createAccount(deps.accounts, { name, now: new Date(deps.now()) });
      return jsonResponse(201, { account_id: created.accountId, token: created.token, token_id: created.tokenId });
    },
  },
  {
    method: 'POST',
    path: API_PATHS.adminAccountTokens,
    access: 'admin',
    async handle(call) {
      const { deps, params } = call;
      const body = jsonBody(call);
      if (!(await deps.accounts.accountExists(params.accountId)))
        throw new NotFoundError(`No account ${params.accountId}.`);
      const { name, scopes } = parseBody(body, adminTokenBody);
      const issued = await issueToken(deps.accounts, {
        accountId: params.accountId,
        name,
        scopes,
        now: new Date(deps.now()),
      });
      return jsonResponse(201, { token_id: issued.tokenId, token: issued.token });
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.adminToken,
    access: 'admin',
    async handle({ deps, params }) {
      // Token ids start with their account id, which is all we need to find them.
      const accountId = params.tokenId.split('_')[0];
      const valid = parseToken(`sk-proxy-${params.tokenId}_${'x'.repeat(32)}`);
      if (!valid || !(await deps.accounts.revokeToken(accountId, params.tokenId, new Date(deps.now()).toISOString()))) {
        throw new NotFoundError(`No token ${params.tokenId}.`);
      }
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
];
