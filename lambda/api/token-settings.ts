import * as z from 'zod/mini';
import {
  MAX_MODEL_ENTRIES,
  MAX_MODEL_ENTRY_CHARS,
  MAX_REQUESTS_PER_MINUTE,
  MIN_REQUESTS_PER_MINUTE,
  type TokenLimits,
} from '../auth/token-limits';
import type { TokenRecord } from '../auth/ports';
import { NotFoundError, PermissionError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { checkTagMap, type Tags } from '../tags/tags';
import { jsonBody, parseBody, plainText, strictBody } from './request-body';
import type { ApiRoute, ManageCall } from './route-types';
import { API_PATHS } from './paths';
import { recordCallerChange } from './audit-trail';

/** `{"tags": {"team": "search"}}`: the token's own tags, replacing any it had; `{}` removes them. */
const tagsBody = strictBody(
  {
    tags: z.custom<Tags>().check(
      z.superRefine((value, context) => {
        const checked = checkTagMap(value, 'tags');
        if (!checked.ok) context.issues.push({ code: 'custom', message: checked.message, input: value, path: [] });
      }),
    ),
  },
  '"tags"',
);

const RPM_ERROR = `requests_per_minute must be an integer from ${MIN_REQUESTS_PER_MINUTE} to ${MAX_REQUESTS_PER_MINUTE.toLocaleString('en-US')} (or null for the default).`;
const MODELS_ERROR = `models must be a list of 1 to ${MAX_MODEL_ENTRIES} model ids or id prefixes, each 1 to ${MAX_MODEL_ENTRY_CHARS} characters (or null for any model).`;

/** `{"requests_per_minute": 5, "models": ["claude-haiku-"]}`: each one absent or null means no limit of that kind. */
const limitsBody = strictBody(
  {
    requests_per_minute: z.optional(
      z.nullable(
        z
          .number({ error: RPM_ERROR })
          .check(
            z.int(RPM_ERROR),
            z.gte(MIN_REQUESTS_PER_MINUTE, RPM_ERROR),
            z.lte(MAX_REQUESTS_PER_MINUTE, RPM_ERROR),
          ),
      ),
    ),
    models: z.optional(
      z.nullable(
        z
          .array(
            z
              .string({ error: MODELS_ERROR })
              .check(
                z.minLength(1, MODELS_ERROR),
                z.maxLength(MAX_MODEL_ENTRY_CHARS, MODELS_ERROR),
                plainText('models'),
              ),
            { error: MODELS_ERROR },
          )
          .check(z.minLength(1, MODELS_ERROR), z.maxLength(MAX_MODEL_ENTRIES, MODELS_ERROR)),
      ),
    ),
  },
  '"requests_per_minute" and "models"',
);

export function parseLimits(body: Record<string, unknown>): TokenLimits {
  const { requests_per_minute: rpm, models } = parseBody(body, limitsBody);
  return {
    ...(rpm != null ? { requestsPerMinute: rpm } : {}),
    ...(models != null ? { models: [...new Set(models)] } : {}),
  };
}

export function parseTokenTags(body: Record<string, unknown>): Tags {
  return parseBody(body, tagsBody).tags;
}

/** Limits as the API shows them: null where the token has none. */
export function limitsJson(limits: TokenLimits | undefined) {
  return { requests_per_minute: limits?.requestsPerMinute ?? null, models: limits?.models ?? null };
}

/**
 * The token a call names, in the caller's account. A token id of another account is "not found",
 * exactly like one that doesn't exist; a member may change only the tokens it issued (docs/people.md).
 * The token is read once, when a member calls or the caller asks for it (`read`: a settings change
 * records what it replaces); `token` is that read, undefined when there was none or no such token.
 */
export async function ownToken(
  { deps, params, caller }: ManageCall,
  { read = false } = {},
): Promise<{ tokenId: string; token?: TokenRecord }> {
  const { tokenId } = params;
  if (!tokenId.startsWith(`${caller.accountId}_`)) throw new NotFoundError(`No token ${tokenId} in this account.`);
  const token = read || caller.role === 'member' ? await deps.accounts.getToken(caller.accountId, tokenId) : undefined;
  if (caller.role === 'member') {
    if (!token) throw new NotFoundError(`No token ${tokenId} in this account.`);
    if (token.createdBy !== caller.actor)
      throw new PermissionError('A member may only change the tokens it issued itself; this needs the admin role.');
  }
  return { tokenId, token };
}

/** A token's own tags and limits (docs/tags.md). Each change is written to the token and its gate at once. */
export const tokenSettingRoutes: ApiRoute[] = [
  {
    method: 'PUT',
    path: API_PATHS.token,
    access: 'manage',
    role: 'member',
    async handle(call) {
      const { tokenId, token: before } = await ownToken(call, { read: true });
      const tags = parseTokenTags(jsonBody(call));
      if (!(await call.deps.accounts.updateToken(call.caller.accountId, tokenId, { tags })))
        throw new NotFoundError(`No token ${tokenId} in this account.`);
      await recordCallerChange(call, {
        action: 'token.tags',
        target: tokenId,
        before: before?.tags ?? {},
        after: tags,
      });
      return jsonResponse(200, { token_id: tokenId, tags });
    },
  },
  {
    method: 'PUT',
    path: API_PATHS.tokenLimits,
    access: 'manage',
    role: 'member',
    async handle(call) {
      const { tokenId, token: before } = await ownToken(call, { read: true });
      const limits = parseLimits(jsonBody(call));
      if (!(await call.deps.accounts.updateToken(call.caller.accountId, tokenId, { limits })))
        throw new NotFoundError(`No token ${tokenId} in this account.`);
      await recordCallerChange(call, {
        action: 'token.limits',
        target: tokenId,
        before: limitsJson(before?.limits),
        after: limitsJson(limits),
      });
      return jsonResponse(200, { token_id: tokenId, ...limitsJson(limits) });
    },
  },
];
