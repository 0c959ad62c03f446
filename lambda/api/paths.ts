/**
 * Every path of the management API (docs/management-api.md), named once: the router's routes are
 * declared with these patterns and the dashboard's client builds its URLs from them, so the
 * dashboard cannot call a path the router doesn't have.
 */
export const API_PATHS = {
  health: '/api/health',
  adminAccounts: '/api/admin/accounts',
  adminAccountTokens: '/api/admin/accounts/:accountId/tokens',
  adminToken: '/api/admin/tokens/:tokenId',
  keys: '/api/keys',
  key: '/api/keys/:provider',
  logs: '/api/logs',
  logsCsv: '/api/logs.csv',
  logRow: '/api/logs/:id',
  stats: '/api/stats',
  tokens: '/api/tokens',
  token: '/api/tokens/:tokenId',
  tokenLimits: '/api/tokens/:tokenId/limits',
  tokenBudget: '/api/tokens/:tokenId/budget',
  tokenFallbacks: '/api/tokens/:tokenId/fallbacks',
  budgets: '/api/budgets',
  requesterBudget: '/api/budgets/requesters/:requester',
  tagBudget: '/api/budgets/tags/:key/:value',
  prices: '/api/prices',
  price: '/api/prices/:model',
  fallbacks: '/api/fallbacks',
  fallback: '/api/fallbacks/:provider/:model',
  fallbackLimits: '/api/fallback-limits',
  alerts: '/api/alerts',
  alertWebhook: '/api/alerts/webhook',
  audit: '/api/audit',
  session: '/api/session',
  signInConfig: '/api/auth/config',
  signIn: '/api/auth/login',
  signInCallback: '/api/auth/callback',
  signOut: '/api/auth/logout',
  groupRoles: '/api/roles',
  groupRole: '/api/roles/:group',
  adminGroupRole: '/api/admin/accounts/:accountId/roles/:group',
} as const;

/** A path pattern of the management API, with `:name` segments. */
export type ApiPath = (typeof API_PATHS)[keyof typeof API_PATHS];

/** The `:name` segments of a pattern. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** A URL path of the management API: a pattern with its segments filled in (`pathTo`). */
export type ApiUrlPath = string & { readonly apiPath: unique symbol };

/** The path of one resource: each `:name` of the pattern replaced by its value, percent-encoded. */
export function pathTo<P extends ApiPath>(pattern: P, params: Record<PathParams<P>, string>): ApiUrlPath {
  const values: Record<string, string> = params;
  return pattern.replace(/:([A-Za-z]+)/g, (_segment, name: string) => encodeURIComponent(values[name])) as ApiUrlPath;
}
