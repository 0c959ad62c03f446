import type { ParsedToken } from '../auth/proxy-token';
import type { BackgroundWork } from '../background-work';
import type { BudgetStatus } from '../budgets/budget';
import type { CacheFill } from '../cache/cache-fill';
import type { CacheRequest } from '../cache/cache-request';
import type { CachedResponse } from '../cache/response-cache';
import type { IncomingRequest } from '../http/request';
import type { Provider } from '../providers/registry';
import type { Endpoint } from '../providers/types';
import type { ValidationResult } from '../providers/types';
import type { RateLimitDecision, StoredProviderKey, TokenRecord } from '../store/ports';

/** What one proxied request has learned so far, step by step through the pipeline. */
export interface ProxyState {
  request: IncomingRequest;
  /** This request's after-response work (see PipelineData.work). */
  work: BackgroundWork;
  provider: Provider;
  /** Which of the provider's endpoints this is (or `other`); its dialect reads the body and the answer. */
  endpoint: Endpoint;
  /** Below the provider's base URL; checked safe when routed. */
  upstreamPath: string;
  mode: 'stored' | 'pass-through';
  /** The credential the client presented (a proxy token or its own provider key). */
  credential?: string;
  token?: ParsedToken;
  body?: Record<string, unknown>;
  validation: ValidationResult;
  requester?: string;
  stream: boolean;
  cache: CacheRequest;
  /** Set by the cache step for a request it doesn't answer: takes the provider's answer. */
  cacheFill?: CacheFill;
  /** Store reads started together, so they cost one round trip; each step awaits its own. */
  lookups?: {
    token: Promise<TokenRecord | undefined>;
    rateLimit: Promise<RateLimitDecision>;
    /** Rides in the token's read: budgets cost no store call of their own. */
    budgets: Promise<BudgetStatus[]>;
    providerKey?: Promise<StoredProviderKey | undefined>;
    cachedResponse?: Promise<CachedResponse | undefined>;
  };
  tokenRecord?: TokenRecord;
  rateLimit?: RateLimitDecision;
  /** The budgets that apply to this request (token, requester), with their spend before it. */
  budgets?: BudgetStatus[];
  /** The key sent upstream; lives only as long as this request. */
  upstreamKey?: string;
}

export function rateLimitHeaders(decision: RateLimitDecision | undefined): Record<string, string> {
  if (!decision) return {};
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
  };
}
