import * as z from 'zod/mini';
import { DEFAULT_ALERT_AT, type Budget, type BudgetStatus, type BudgetSubject } from '../budgets/budget';
import { BUDGET_PERIODS, type BudgetPeriod } from '../budgets/periods';
import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse, type ProxyResponse } from '../http/response';
import { unsafeCharacterIn } from '../base/plain-text';
import { nanosToUsd } from '../pricing/price-table';
import { keyProblem, OVERFLOW_VALUE, valueProblem } from '../tags/tags';
import { REQUESTER_MAX_CHARS } from '../usage/usage-row';
import { hasAtMostSixDecimals, jsonBody, parseBody, strictBody } from './request-body';
import type { ApiRoute, ManageCall } from './route-types';
import { API_PATHS } from './paths';

/** Limits above this would no longer be exact in nano-dollars as JavaScript numbers. */
const MAX_LIMIT_USD = 1_000_000;
const LIMIT_ERROR = `limit_usd must be a number of dollars greater than 0 and at most ${MAX_LIMIT_USD}.`;

const ALERT_AT_ERROR =
  'alert_at must be a list of up to 10 fractions of the limit, each greater than 0 and at most 1 (e.g. [0.5, 0.8, 1]).';

/**
 * `{"limit_usd": 25, "period": "month", "alert_at"?: [0.8, 1]}`: a positive dollar amount with at most 6 decimals,
 * a period, and the fractions of the limit at which an alert is sent (docs/alerts.md); `[]` sends none.
 */
const budgetBody = strictBody(
  {
    limit_usd: z
      .number({ error: LIMIT_ERROR })
      .check(
        z.positive(LIMIT_ERROR),
        z.lte(MAX_LIMIT_USD, LIMIT_ERROR),
        z.refine(hasAtMostSixDecimals, 'limit_usd can have at most 6 decimal places.'),
      ),
    period: z.enum(BUDGET_PERIODS, { error: 'period must be "day", "month" or "total" (UTC calendar periods).' }),
    alert_at: z.optional(
      z
        .array(z.number({ error: ALERT_AT_ERROR }).check(z.positive(ALERT_AT_ERROR), z.lte(1, ALERT_AT_ERROR)), {
          error: ALERT_AT_ERROR,
        })
        .check(z.maxLength(10, ALERT_AT_ERROR)),
    ),
  },
  '"limit_usd", "period" and, if you like, "alert_at"',
);

export function parseBudget(body: Record<string, unknown>): Budget {
  const { limit_usd: limit, period, alert_at: alertAt = DEFAULT_ALERT_AT } = parseBody(body, budgetBody);
  // Ascending and without repeats: each fraction is one alert per period.
  return { limitNanos: Math.round(limit * 1e9), period, alertAt: [...new Set(alertAt)].sort((a, b) => a - b) };
}

/** A budget as the API shows it; `resets_at` is null for a total budget. */
export interface BudgetJson {
  limit_usd: number;
  period: BudgetPeriod;
  spent_usd: number;
  resets_at: string | null;
  alert_at: readonly number[];
}

export function budgetJson(status: BudgetStatus): BudgetJson {
  return {
    limit_usd: nanosToUsd(status.budget.limitNanos),
    period: status.budget.period,
    spent_usd: nanosToUsd(status.spentNanos),
    resets_at: status.resetsAt === undefined ? null : new Date(status.resetsAt).toISOString(),
    alert_at: status.budget.alertAt ?? DEFAULT_ALERT_AT,
  };
}

async function tokenSubject({ deps, params, caller }: ManageCall): Promise<BudgetSubject> {
  const accountId = caller.accountId;
  // A token id of another account is "not found" here, exactly like one that doesn't exist.
  const found = params.tokenId.startsWith(`${accountId}_`) && (await deps.accounts.getToken(accountId, params.tokenId));
  if (!found) throw new NotFoundError(`No token ${params.tokenId} in this account.`);
  return { kind: 'token', tokenId: params.tokenId };
}

function requesterSubject({ params }: ManageCall): BudgetSubject {
  if (params.requester.length > REQUESTER_MAX_CHARS) {
    throw new ValidationError(
      `requester must be at most ${REQUESTER_MAX_CHARS} characters (the longest label a usage row keeps).`,
      'requester',
    );
  }
  const unsafe = unsafeCharacterIn(params.requester);
  if (unsafe) {
    throw new ValidationError(
      `requester holds ${unsafe}, a control or bidirectional character; a requester label is plain text.`,
      'requester',
    );
  }
  if (params.requester === OVERFLOW_VALUE)
    throw new ValidationError(
      `requester: the label ${OVERFLOW_VALUE} is reserved, so no request carries it.`,
      'requester',
    );
  return { kind: 'requester', requester: params.requester };
}

/** A tag value's budget: key and value follow the rules of `x-proxy-tags` (docs/tags.md). */
function tagSubject({ params }: ManageCall): BudgetSubject {
  const problem = keyProblem(params.key);
  if (problem) throw new ValidationError(`key: ${problem}.`, 'key');
  const valueIssue = valueProblem(params.key, params.value);
  if (valueIssue) throw new ValidationError(`value: ${valueIssue}.`, 'value');
  return { kind: 'tag', key: params.key, value: params.value };
}

async function putBudget(call: ManageCall, subject: BudgetSubject): Promise<ProxyResponse> {
  const { deps, caller } = call;
  const budget = parseBudget(jsonBody(call));
  const now = deps.now();
  await deps.budgets.setBudget(caller.accountId, subject, budget, new Date(now).toISOString());
  const status = await deps.budgets.statusOf(caller.accountId, subject, now);
  // Only a DELETE racing this PUT can leave nothing to show.
  if (!status) throw new NotFoundError('The budget was removed while it was being set.');
  return jsonResponse(200, budgetJson(status));
}

async function deleteBudget(call: ManageCall, subject: BudgetSubject, what: string): Promise<ProxyResponse> {
  if (!(await call.deps.budgets.removeBudget(call.caller.accountId, subject)))
    throw new NotFoundError(`${what} has no budget.`);
  return { statusCode: 204, headers: {}, body: '' };
}

/** Spend limits of the caller's own account: per token, per requester label and per tag value (docs/budgets.md). */
export const budgetRoutes: ApiRoute[] = [
  {
    method: 'PUT',
    path: API_PATHS.tokenBudget,
    access: 'manage',
    handle: async (call) => putBudget(call, await tokenSubject(call)),
  },
  {
    method: 'DELETE',
    path: API_PATHS.tokenBudget,
    access: 'manage',
    handle: async (call) => deleteBudget(call, await tokenSubject(call), `Token ${call.params.tokenId}`),
  },
  {
    method: 'PUT',
    path: API_PATHS.requesterBudget,
    access: 'manage',
    handle: (call) => putBudget(call, requesterSubject(call)),
  },
  {
    method: 'DELETE',
    path: API_PATHS.requesterBudget,
    access: 'manage',
    handle: (call) => deleteBudget(call, requesterSubject(call), 'This requester'),
  },
  {
    method: 'PUT',
    path: API_PATHS.tagBudget,
    access: 'manage',
    handle: (call) => putBudget(call, tagSubject(call)),
  },
  {
    method: 'DELETE',
    path: API_PATHS.tagBudget,
    access: 'manage',
    handle: (call) => deleteBudget(call, tagSubject(call), 'This tag value'),
  },
  {
    method: 'GET',
    path: API_PATHS.budgets,
    access: 'manage',
    async handle({ deps, caller }) {
      const now = deps.now();
      const [requesterStatuses, tagStatuses] = await Promise.all([
        deps.budgets.listBudgets(caller.accountId, 'requester', now),
        deps.budgets.listBudgets(caller.accountId, 'tag', now),
      ]);
      const requesters = requesterStatuses.flatMap(({ subject, ...rest }) =>
        subject.kind === 'requester' ? [{ requester: subject.requester, ...budgetJson({ subject, ...rest }) }] : [],
      );
      requesters.sort((a, b) => a.requester.localeCompare(b.requester));
      const tags = tagStatuses.flatMap(({ subject, ...rest }) =>
        subject.kind === 'tag' ? [{ key: subject.key, value: subject.value, ...budgetJson({ subject, ...rest }) }] : [],
      );
      tags.sort((a, b) => a.key.localeCompare(b.key) || a.value.localeCompare(b.value));
      return jsonResponse(200, { requesters, tags });
    },
  },
];
