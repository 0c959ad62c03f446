import { ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { DAY_MS } from '../usage/rollups/bucket-keys';
import { isoParam } from './iso-param';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';

export const DEFAULT_STATS_DAYS = 7;
export const MAX_STATS_DAYS = 400;

/**
 * The requested period [from, to). Either end may be left out: `to` defaults
 * to now, `from` to seven days before `to`. The store widens it to whole hours.
 */
export function readStatsPeriod(query: URLSearchParams, now: Date): { from: Date; to: Date } {
  const requestedTo = isoParam(query, 'to');
  const requestedFrom = isoParam(query, 'from');
  const to = requestedTo ?? now;
  const from = requestedFrom ?? new Date(to.getTime() - DEFAULT_STATS_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime())
    throw new ValidationError('from must be earlier than to.', requestedFrom ? 'from' : 'to');
  if (to.getTime() - from.getTime() > MAX_STATS_DAYS * DAY_MS) {
    throw new ValidationError(`The period may span at most ${MAX_STATS_DAYS} days.`, requestedFrom ? 'from' : 'to');
  }
  return { from, to };
}

export const statsRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.stats,
    access: 'manage',
    async handle({ deps, request, caller }) {
      const { from, to } = readStatsPeriod(request.query, new Date(deps.now()));
      // The answer's from/to are the effective period: rollups are hourly, so the ends move to whole UTC hours.
      const [summary, tokens] = await Promise.all([
        deps.usageStats.summarize(caller.accountId, from, to),
        deps.accounts.listTokens(caller.accountId),
      ]);
      // Rollups keep token ids only; names can change, so they are looked up at read time.
      const names = new Map(tokens.map((t) => [t.tokenId, t.name ?? '']));
      summary.by_token = summary.by_token.map((entry) =>
        names.has(entry.token_id) ? { ...entry, name: names.get(entry.token_id) } : entry,
      );
      return jsonResponse(200, summary);
    },
  },
];
