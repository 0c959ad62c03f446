import type { SignInCheck } from '../auth/failed-sign-ins';
import type { ParsedToken } from '../auth/proxy-token';
import type { BackgroundWork } from '../base/background-work';
import type { BudgetStatus } from '../budgets/budget';
import type { CacheFill } from '../cache/cache-fill';
import type { CacheRequest } from '../cache/cache-request';
import type { CachedResponse } from '../cache/response-cache';
import type { IncomingRequest } from '../http/request';
import type { Provider, Route } from '../providers/registry';
import type { RouteResult } from '../providers/routes';
import type { Dialect, Endpoint, ValidationResult } from '../providers/types';
import type { GateVerdict, PresentedToken, RateLimitDecision } from '../auth/ports';
import type { StoredProviderKey } from '../keys/ports';
import type { AccountPrice } from '../account-prices/account-price';
import type { Prices } from '../account-prices/priced-for-account';
import type { Tags, TagsCheck } from '../tags/tags';
import type { FailoverPlan } from '../upstream/fallbacks';
import type { AccountFailover } from '../account-settings/failover-settings';

/*
 * What one request has proved so far. Each step of the pipeline (proxy-handler.ts) takes the
 * state its work needs and adds what it proved, so a step placed before the one that proves
 * its input does not compile.
 */

/** Known for every request once its event is decoded (proxy, API, dashboard): all an error answer needs. */
export interface Received {
  request: IncomingRequest;
  /** Where the path leads below the proxy base (undefined for other paths). */
  route: RouteResult<Provider> | undefined;
  /** The error shape to answer in: the endpoint's dialect, or the API's. */
  dialect: Dialect;
  /** CORS headers for this request's origin (empty for other origins). */
  cors: Record<string, string>;
  /** Work this request leaves running after its response (row writes); the invocation ends after it. */
  work: BackgroundWork;
}

/** Step 1 (route): what a proxy request says about itself, read without I/O. */
export interface ProxyRequest {
  provider: Provider;
  /** Which of the provider's endpoints this is (or `other`); its dialect reads the body and the answer. */
  endpoint: Endpoint;
  /** Below the provider's base URL; checked safe when routed. */
  upstreamPath: Route['upstreamPath'];
  /** The model the path names (Bedrock's `/model/{modelId}/…`), decoded; it is the row's model. */
  pathModel?: string;
  mode: 'stored' | 'pass-through';
  /** The credential the client presented (a proxy token or its own provider key). */
  credential?: string;
  token?: ParsedToken;
  /** The parsed body when it is a JSON object. */
  body?: Record<string, unknown>;
  requester?: string;
  /** What the endpoint makes of the body, judged once when routed; a failure is refused in step 5. */
  bodyCheck: ValidationResult;
  /** What `x-proxy-tags` says, read and checked without I/O; a problem is refused in step 5. */
  requestTags: TagsCheck;
  stream: boolean;
  cache: CacheRequest;
}

/**
 * The store reads a request needs before forwarding, started together so they cost one round trip
 * (Middy's `request.internal`: the step that identifies the token starts them, each later step awaits its own).
 */
export type StoreReads = {
  /** The token gate: the token's stored record and this request's rate count, in one call. */
  gate: Promise<GateVerdict>;
  /** The token's budget (when its gate says it has one), the named requester's and the tags', with their spend. */
  budgets: Promise<BudgetStatus[]>;
  /** Stored mode only; pass-through mode sends the caller's own key. */
  providerKey: Promise<StoredProviderKey | undefined>;
  /** The account's own prices, from the instance's short cache (a read beside the gate when cold). */
  accountPrices: Promise<AccountPrice[]>;
  /** The account's default fallbacks and limits, from the instance's short cache likewise. */
  accountSettings: Promise<AccountFailover>;
  cachedResponse?: Promise<CachedResponse | undefined>;
};

/** Step 2 (identify): one credential and a well-formed proxy token; its store reads have started. */
export interface Identified {
  credential: string;
  token: ParsedToken;
  /** The token as presented, its secret hashed once for the gate and the check in step 3. */
  presented: PresentedToken;
  /** The failed-sign-in throttle's place for this check, freed once step 3 has passed or refused the token. */
  signIn: SignInCheck;
}

/** Step 3 (authenticate): the token is real, unrevoked and may proxy. */
export interface Authenticated {
  /** The gate's answer for this request, with the token's record: admitted, or over the limit (the next step answers 429). */
  gate: Extract<GateVerdict, { kind: 'admitted' | 'limited' }>;
}

/** Step 4 (rate limit). */
export interface Limited {
  rateLimit: RateLimitDecision;
}

/** Step 5 (validate): the content type, the body and the proxy's own headers are acceptable. */
export interface Validated {
  validated: true;
  /** The row's tags: the request's joined with the token's own, which no request overrides. */
  tags: Tags;
}

/** Step 6 (model list): the token may use the model this request names. */
export interface ModelAllowed {
  modelAllowed: true;
}

/**
 * Step 7 (budget): the budgets that apply (token, requester), with their spend before this request,
 * and the prices this account's requests are charged at (its own over the built-in ones), which
 * decide whether a budget can count the request at all.
 */
export interface Budgeted {
  budgets: BudgetStatus[];
  prices: Prices;
}

/** Step 7b (fallbacks): the targets that may answer this request, primary first, and the limits that move it on. */
export interface FailoverPlanned {
  failover: FailoverPlan;
}

/**
 * Step 8 (resolve the provider key): the key sent upstream; lives only as long as this request.
 * `undefined` for a provider reached through AWS in stored mode with no key saved: the request is
 * signed with the runtime's own AWS credentials instead (docs/bedrock.md).
 */
export interface Keyed {
  upstreamKey: string | undefined;
}

/** Step 9 (cache), for a request it doesn't answer: takes the provider's answer (stores it, or lets it pass). */
export interface CacheConsulted {
  cacheFill: CacheFill;
}

export type Routed = Received & ProxyRequest;

/** What a usage row is made of: any request that got past authentication and validation. */
export type Recordable = Routed &
  Pick<Identified, 'token'> &
  Pick<Validated, 'tags'> &
  Partial<Pick<Budgeted, 'prices'>>;

/** What the cache step (9) relies on. */
export type Admitted = Routed &
  Identified &
  Authenticated &
  Limited &
  Validated &
  ModelAllowed &
  Budgeted &
  FailoverPlanned &
  Keyed;

/** Everything the forward step (10) relies on. */
export type ProxyState = Admitted & CacheConsulted;

/** What an answer's headers may draw on, whichever step it leaves from. */
export type Answering = Received & Partial<Limited & Budgeted>;

/**
 * The proxy's own rate-limit state, under its own names: the provider's `x-ratelimit-*` headers
 * describe the provider's limits on the provider key and reach the client as sent.
 */
export function rateLimitHeaders(decision: RateLimitDecision | undefined): Record<string, string> {
  if (!decision) return {};
  return {
    'x-proxy-ratelimit-limit': String(decision.limit),
    'x-proxy-ratelimit-remaining': String(decision.remaining),
    'x-proxy-ratelimit-reset': String(decision.resetAt),
  };
}
