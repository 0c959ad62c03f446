import type {
  AccountPrice,
  FallbackSettings,
  FallbackDefault,
  PriceInput,
  Budget,
  BudgetInput,
  CreatedToken,
  Health,
  LogPage,
  LogRow,
  RequesterBudget,
  SentAlert,
  Stats,
  Signing,
  StoredKey,
  TagBudget,
  Tags,
  TokenInfo,
  TokenLimits,
  AuditPage,
  SessionInfo,
} from './types';
import type { ManagementErrorBody } from '../../api/error-shape';
import { API_PATHS, pathTo, type ApiUrlPath } from '../../api/paths';

/** An error answer of the management API (its `code` and `field`, docs/management-api.md), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string = 'error',
    readonly field: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A list value repeats its parameter (`tag=team=search&tag=feature=x`). */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/** A path the router has: one of `API_PATHS`, or one built from a pattern by `pathTo`. */
type RoutedPath = (typeof API_PATHS)[keyof typeof API_PATHS] | ApiUrlPath;

/** The path with its query; still a path the router has. */
function withQuery(path: RoutedPath, query?: Query): RoutedPath {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const item of value as readonly string[]) params.append(key, item);
    else if (value !== undefined && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? (`${path}?${text}` as ApiUrlPath) : path;
}

async function errorFrom(response: Response): Promise<ApiError> {
  const message = `${response.status} ${response.statusText}`.trim();
  try {
    const { error } = (await response.json()) as Partial<ManagementErrorBody>;
    if (error) return new ApiError(response.status, error.message || message, error.code, error.field);
  } catch {
    // Not JSON (a proxy in front of us, for example): the status line is the best we have.
  }
  return new ApiError(response.status, message);
}

/**
 * How the dashboard proves who it is: a proxy token in a bearer header, or a person's session cookie
 * (sent by the browser itself) with its CSRF token in `x-csrf-token` on every change (docs/people.md).
 */
export type Credential = { token: string } | { csrf: string | null };

function credentialHeaders(credential: Credential | string | null, method: string): Record<string, string> {
  if (typeof credential === 'string') return { authorization: `Bearer ${credential}` };
  if (!credential) return {};
  if ('token' in credential) return { authorization: `Bearer ${credential.token}` };
  return credential.csrf && method !== 'GET' ? { 'x-csrf-token': credential.csrf } : {};
}

export async function request<T>(
  credential: Credential | string | null,
  method: string,
  path: RoutedPath,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...credentialHeaders(credential, method) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'Could not reach the server. Check your connection and try again.', 'network_error');
  }
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** The management API, bound to one signed-in token or session. */
export function createApi(credential: Credential, onUnauthorized: (error: ApiError) => void) {
  async function call<T>(method: string, path: RoutedPath, body?: unknown): Promise<T> {
    try {
      return await request<T>(credential, method, path, body);
    } catch (error) {
      // A token revoked while the dashboard is open ends the session instead of failing page by page.
      if (error instanceof ApiError && error.status === 401) onUnauthorized(error);
      throw error;
    }
  }
  return {
    keys: () => call<{ keys: StoredKey[]; signing: Signing }>('GET', API_PATHS.keys),
    saveKey: (provider: string, key: string) =>
      call<{ provider: string; hint: string }>('PUT', pathTo(API_PATHS.key, { provider }), { key }),
    deleteKey: (provider: string) => call<void>('DELETE', pathTo(API_PATHS.key, { provider })),
    logs: (query: Query) => call<LogPage>('GET', withQuery(API_PATHS.logs, query)),
    logRow: (id: string) => call<LogRow>('GET', pathTo(API_PATHS.logRow, { id })),
    /** The CSV export as a file, fetched with the session's token (a plain link could not send it). */
    logsCsv: async (query: Query): Promise<Blob> => {
      let response: Response;
      try {
        response = await fetch(withQuery(API_PATHS.logsCsv, query), {
          headers: credentialHeaders(credential, 'GET'),
          cache: 'no-store',
        });
      } catch {
        throw new ApiError(0, 'Could not reach the server. Check your connection and try again.', 'network_error');
      }
      if (!response.ok) {
        const error = await errorFrom(response);
        if (error.status === 401) onUnauthorized(error);
        throw error;
      }
      return response.blob();
    },
    stats: (from: string, to: string) => call<Stats>('GET', withQuery(API_PATHS.stats, { from, to })),
    tokens: () => call<{ tokens: TokenInfo[] }>('GET', API_PATHS.tokens),
    createToken: (name: string) => call<CreatedToken>('POST', API_PATHS.tokens, { name }),
    setTokenTags: (tokenId: string, tags: Tags) =>
      call<{ token_id: string; tags: Tags }>('PUT', pathTo(API_PATHS.token, { tokenId }), { tags }),
    /** Values that are not numbers are sent as typed, so the server's message names the field. */
    setTokenLimits: (tokenId: string, limits: { requests_per_minute: unknown; models: string[] | null }) =>
      call<TokenLimits & { token_id: string }>('PUT', pathTo(API_PATHS.tokenLimits, { tokenId }), limits),
    setTokenFallbacks: (tokenId: string, fallbacks: FallbackDefault[]) =>
      call<{ token_id: string; fallbacks: FallbackDefault[] }>('PUT', pathTo(API_PATHS.tokenFallbacks, { tokenId }), {
        fallbacks,
      }),
    revokeToken: (tokenId: string) => call<void>('DELETE', pathTo(API_PATHS.token, { tokenId })),
    setTokenBudget: (tokenId: string, budget: BudgetInput) =>
      call<Budget>('PUT', pathTo(API_PATHS.tokenBudget, { tokenId }), budget),
    removeTokenBudget: (tokenId: string) => call<void>('DELETE', pathTo(API_PATHS.tokenBudget, { tokenId })),
    budgets: () => call<{ requesters: RequesterBudget[]; tags: TagBudget[] }>('GET', API_PATHS.budgets),
    setRequesterBudget: (requester: string, budget: BudgetInput) =>
      call<Budget>('PUT', pathTo(API_PATHS.requesterBudget, { requester }), budget),
    removeRequesterBudget: (requester: string) =>
      call<void>('DELETE', pathTo(API_PATHS.requesterBudget, { requester })),
    setTagBudget: (key: string, value: string, budget: BudgetInput) =>
      call<Budget>('PUT', pathTo(API_PATHS.tagBudget, { key, value }), budget),
    removeTagBudget: (key: string, value: string) => call<void>('DELETE', pathTo(API_PATHS.tagBudget, { key, value })),
    alerts: () => call<{ alerts: SentAlert[] }>('GET', API_PATHS.alerts),
    prices: () => call<{ prices: AccountPrice[] }>('GET', API_PATHS.prices),
    setPrice: (model: string, price: PriceInput) =>
      call<AccountPrice>('PUT', pathTo(API_PATHS.price, { model }), price),
    removePrice: (model: string) => call<void>('DELETE', pathTo(API_PATHS.price, { model })),
    fallbackSettings: () => call<FallbackSettings>('GET', API_PATHS.fallbacks),
    setFallbacks: (provider: string, model: string, fallbacks: string[]) =>
      call<FallbackDefault>('PUT', pathTo(API_PATHS.fallback, { provider, model }), { fallbacks }),
    removeFallbacks: (provider: string, model: string) =>
      call<void>('DELETE', pathTo(API_PATHS.fallback, { provider, model })),
    setFallbackLimits: (limits: { first_token_timeout: unknown; stall_timeout: unknown }) =>
      call<Omit<FallbackSettings, 'fallbacks'>>('PUT', API_PATHS.fallbackLimits, limits),
    session: () => call<SessionInfo>('GET', API_PATHS.session),
    audit: (query: Query) => call<AuditPage>('GET', withQuery(API_PATHS.audit, query)),
  };
}

export type Api = ReturnType<typeof createApi>;

/** The session a sign-in cookie carries, if the browser has one; null otherwise. */
export async function cookieSession(): Promise<SessionInfo | null> {
  return request<SessionInfo>({ csrf: null }, 'GET', API_PATHS.session).catch(() => null);
}

/** Whether the proxy offers sign-in with an identity provider. */
export async function signInOptions(): Promise<{ oidc: boolean }> {
  return request<{ oidc: boolean }>(null, 'GET', API_PATHS.signInConfig).catch(() => ({ oidc: false }));
}

/** Ends a person's session: the server clears its cookie. */
export async function endSession(): Promise<void> {
  await request<void>(null, 'POST', API_PATHS.signOut).catch(() => undefined);
}

export function health(): Promise<Health> {
  return request<Health>(null, 'GET', API_PATHS.health);
}

/** What a person should read when a token is refused, by status. */
export function signInMessage(error: unknown): string {
  if (!(error instanceof ApiError)) return 'Something went wrong. Try again.';
  if (error.status === 401) {
    return 'This token was not accepted: it is wrong or has been revoked. Paste the whole token, starting with sk-proxy-.';
  }
  if (error.status === 403) {
    return 'This token can send proxy requests but cannot open the dashboard. Sign in with a token that has the manage scope, such as the one printed when the server first started.';
  }
  return error.message;
}
