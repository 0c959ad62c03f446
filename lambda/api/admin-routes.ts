import { ALL_SCOPES, createAccount, issueToken } from '../auth/issue';
import { parseToken } from '../auth/proxy-token';
import { NotFoundError, ValidationError } from '../errors';
import { jsonResponse } from '../http/response';
import type { Scope } from '../store/ports';
import { jsonBody, type ApiRoute } from './route-types';

function optionalName(body: Record<string, unknown>): string | undefined {
  if (body.name === undefined || body.name === null) return undefined;
  if (typeof body.name !== 'string' || body.name.length > 200) throw new ValidationError('name must be a string of at most 200 characters.', 'name');
  return body.name;
}

function scopesFrom(body: Record<string, unknown>): Scope[] {
  if (body.scopes === undefined) return [...ALL_SCOPES];
  const scopes = body.scopes;
  if (!Array.isArray(scopes) || !scopes.length || !scopes.every((s) => ALL_SCOPES.includes(s as Scope))) {
    throw new ValidationError('scopes must be a non-empty array of "proxy" and/or "manage".', 'scopes');
  }
  return [...new Set(scopes as Scope[])];
}

/** Admin routes (bearer admin key): accounts and their tokens. */
export const adminRoutes: ApiRoute[] = [
  {
    method: 'POST',
    path: '/api/admin/accounts',
    access: 'admin',
    async handle(call) {
      const { deps } = call;
      const created = await createAccount(deps.accounts, { name: optionalName(jsonBody(call)), now: new Date(deps.now()) });
      return jsonResponse(201, { account_id: created.accountId, token: created.token, token_id: created.tokenId });
    },
  },
  {
    method: 'POST',
    path: '/api/admin/accounts/:accountId/tokens',
    access: 'admin',
    async handle(call) {
      const { deps, params } = call;
      const body = jsonBody(call);
      if (!(await deps.accounts.accountExists(params.accountId))) throw new NotFoundError(`No account ${params.accountId}.`);
      const issued = await issueToken(deps.accounts, { accountId: params.accountId, name: optionalName(body), scopes: scopesFrom(body), now: new Date(deps.now()) });
      return jsonResponse(201, { token_id: issued.tokenId, token: issued.token });
    },
  },
  {
    method: 'DELETE',
    path: '/api/admin/tokens/:tokenId',
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
