import * as z from 'zod/mini';
import {
  defaultsJson,
  defaultsKey,
  defaultsProblem,
  limitInRange,
  MAX_ACCOUNT_DEFAULTS,
  MAX_MODEL_CHARS,
  MAX_TOKEN_DEFAULTS,
  type AccountFailover,
  type FallbackDefaults,
} from '../account-settings/failover-settings';
import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { recordCallerChange } from './audit-trail';
import { API_PATHS } from './paths';
import { jsonBody, parseBody, plainText, refuseUnsafeText, strictBody } from './request-body';
import type { ApiCall, ApiRoute } from './route-types';
import { ownToken } from './token-settings';

const FALLBACKS_ERROR = `fallbacks must be a list of 1 to 3 models, each "<model>" or "<provider>/<model>" of 1 to ${MAX_MODEL_CHARS} characters.`;
const fallbackList = z
  .array(
    z
      .string({ error: FALLBACKS_ERROR })
      .check(z.minLength(1, FALLBACKS_ERROR), z.maxLength(MAX_MODEL_CHARS, FALLBACKS_ERROR), plainText('fallbacks')),
    { error: FALLBACKS_ERROR },
  )
  .check(z.minLength(1, FALLBACKS_ERROR), z.maxLength(3, FALLBACKS_ERROR));

/** `{"fallbacks": ["gpt-4o-mini", "prov-d/mistral-small-latest"]}`: one model's defaults, in order. */
const modelDefaultsBody = strictBody({ fallbacks: fallbackList }, '"fallbacks"');

const LIMIT_ERROR = (field: string) =>
  `${field} must be a number of seconds from 1 to 300 (or null for the default, 10).`;
const limitField = (field: string) =>
  z.optional(z.nullable(z.number({ error: LIMIT_ERROR(field) }).check(z.refine(limitInRange, LIMIT_ERROR(field)))));
/** `{"first_token_timeout": 4, "stall_timeout": null}`: the account's limits in seconds; null or absent is the default. */
const limitsBody = strictBody(
  { first_token_timeout: limitField('first_token_timeout'), stall_timeout: limitField('stall_timeout') },
  '"first_token_timeout" and "stall_timeout"',
);

/** `{"fallbacks": [{"provider", "model", "fallbacks"}]}`: a token's defaults, replacing any it had; `[]` removes them. */
const tokenDefaultsBody = strictBody(
  {
    fallbacks: z
      .array(z.strictObject({ provider: z.string(), model: z.string(), fallbacks: fallbackList }), {
        error: `fallbacks must be a list of at most ${MAX_TOKEN_DEFAULTS} {"provider", "model", "fallbacks"}.`,
      })
      .check(
        z.maxLength(MAX_TOKEN_DEFAULTS, `A token keeps default fallbacks for at most ${MAX_TOKEN_DEFAULTS} models.`),
      ),
  },
  '"fallbacks"',
);

/** A model id as a path or body names it: plain text, 1 to 200 characters. */
function checkedModel(raw: string): string {
  const model = raw.trim();
  if (!model || model.length > MAX_MODEL_CHARS)
    throw new ValidationError(`model must be a model id of 1 to ${MAX_MODEL_CHARS} characters.`, 'model');
  refuseUnsafeText('model', model);
  return model;
}

/** One model's defaults, checked as the proxy will use them: a 400 for what could never be. */
function checkedDefaults(provider: string, rawModel: string, fallbacks: string[]): [string, string[]] {
  refuseUnsafeText('provider', provider);
  const model = checkedModel(rawModel);
  const entries = fallbacks.map((entry) => entry.trim());
  const problem = defaultsProblem(provider, entries);
  if (problem) throw new ValidationError(`fallbacks for ${defaultsKey(provider, model)}: ${problem}`, 'fallbacks');
  return [defaultsKey(provider, model), entries];
}

const seconds = (ms: number | undefined) => (ms === undefined ? null : ms / 1000);

/** The account's settings as the API shows them. */
function settingsJson(settings: AccountFailover) {
  return {
    fallbacks: defaultsJson(settings.fallbacks),
    first_token_timeout: seconds(settings.firstTokenMs),
    stall_timeout: seconds(settings.stallMs),
  };
}

const modelTarget = ({ params }: ApiCall) => defaultsKey(params.provider, params.model);

/** The account's default fallbacks and limits, and a token's own defaults (docs/fallbacks.md, "Defaults"). */
export const fallbackRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.fallbacks,
    access: 'manage',
    role: 'viewer',
    async handle({ deps, caller }) {
      return jsonResponse(200, settingsJson(await deps.accountSettings.get(caller.accountId)));
    },
  },
  {
    method: 'PUT',
    path: API_PATHS.fallback,
    access: 'manage',
    role: 'admin',
    async handle(call) {
      const { fallbacks } = parseBody(jsonBody(call), modelDefaultsBody);
      const [key, entries] = checkedDefaults(call.params.provider, call.params.model, fallbacks);
      const { before } = await call.deps.accountSettings.update(call.caller.accountId, (current) => {
        if (!(key in current.fallbacks) && Object.keys(current.fallbacks).length >= MAX_ACCOUNT_DEFAULTS)
          throw new ValidationError(
            `This account already has default fallbacks for ${MAX_ACCOUNT_DEFAULTS} models, the most it keeps: delete one first.`,
            'model',
          );
        return { ...current, fallbacks: { ...current.fallbacks, [key]: entries } };
      });
      await recordCallerChange(call, {
        action: 'fallbacks.set',
        target: key,
        before: before.fallbacks[key] ?? null,
        after: entries,
      });
      return jsonResponse(200, defaultsJson({ [key]: entries })[0]);
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.fallback,
    access: 'manage',
    role: 'admin',
    async handle(call) {
      const key = modelTarget(call);
      const { before } = await call.deps.accountSettings.update(call.caller.accountId, (current) => {
        if (!(key in current.fallbacks)) throw new NotFoundError(`No default fallbacks for ${key.slice(0, 300)}.`);
        const { [key]: _removed, ...rest } = current.fallbacks;
        return { ...current, fallbacks: rest };
      });
      await recordCallerChange(call, { action: 'fallbacks.removed', target: key, before: before.fallbacks[key] });
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
  {
    method: 'PUT',
    path: API_PATHS.fallbackLimits,
    access: 'manage',
    role: 'admin',
    async handle(call) {
      const body = parseBody(jsonBody(call), limitsBody);
      const ms = (value: number | null | undefined) => (value == null ? undefined : Math.round(value * 1000));
      const { before, after } = await call.deps.accountSettings.update(call.caller.accountId, (current) => ({
        fallbacks: current.fallbacks,
        ...(ms(body.first_token_timeout) !== undefined ? { firstTokenMs: ms(body.first_token_timeout) } : {}),
        ...(ms(body.stall_timeout) !== undefined ? { stallMs: ms(body.stall_timeout) } : {}),
      }));
      const limits = (settings: AccountFailover) => {
        const { first_token_timeout, stall_timeout } = settingsJson(settings);
        return { first_token_timeout, stall_timeout };
      };
      await recordCallerChange(call, {
        action: 'fallbacks.limits',
        target: 'account',
        before: limits(before),
        after: limits(after),
      });
      return jsonResponse(200, limits(after));
    },
  },
  {
    method: 'PUT',
    path: API_PATHS.tokenFallbacks,
    access: 'manage',
    role: 'member',
    async handle(call) {
      const { tokenId, token: before } = await ownToken(call, { read: true });
      const { fallbacks } = parseBody(jsonBody(call), tokenDefaultsBody);
      const map: FallbackDefaults = Object.fromEntries(
        fallbacks.map((entry) => checkedDefaults(entry.provider, entry.model, entry.fallbacks)),
      );
      if (!(await call.deps.accounts.updateToken(call.caller.accountId, tokenId, { fallbacks: map })))
        throw new NotFoundError(`No token ${tokenId} in this account.`);
      await recordCallerChange(call, {
        action: 'token.fallbacks',
        target: tokenId,
        before: defaultsJson(before?.fallbacks),
        after: defaultsJson(map),
      });
      return jsonResponse(200, { token_id: tokenId, fallbacks: defaultsJson(map) });
    },
  },
];
