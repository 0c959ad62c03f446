/**
 * What authentication stores: accounts, their proxy tokens, and the token gate that checks a
 * token and counts its rate in one call. The DynamoDB adapters in `dynamodb/` implement them;
 * nothing outside `deps.ts` knows which adapter is used.
 */

import type { Tags } from '../tags/tags';
import type { Role } from './roles';

export type Scope = 'proxy' | 'manage';

export interface TokenRecord {
  accountId: string;
  tokenId: string;
  name?: string;
  scopes: Scope[];
  /** SHA-256 of the token's secret part, hex. The token itself is never stored. */
  secretHash: string;
  createdAt: string;
  /** When the token last passed the proxy's gate (kept on its gate item). */
  lastUsedAt?: string;
  revokedAt?: string;
  /** The token's own tags, added to every row it makes (docs/tags.md). */
  tags?: Tags;
  limits?: TokenLimits;
  /** Its default fallbacks per model (docs/fallbacks.md), on its gate item like its limits. */
  fallbacks?: FallbackDefaults;
  /**
   * What a `manage` token may do in its account (docs/people.md). Absent on tokens issued without one,
   * which keep today's behaviour: `admin`.
   */
  role?: Role;
  /** Who issued the token (`token:<id>` or `person:<subject>`), so a member can manage the tokens it issued. */
  createdBy?: string;
}

/** A token's own controls (docs/tags.md, "Per-token limits"; the rules are in token-limits.ts). */
export interface TokenLimits {
  /** Requests per minute for this token; absent means the proxy's default. */
  requestsPerMinute?: number;
  /** Model ids or id prefixes this token may call; absent means any model. */
  models?: string[];
}

/**
 * Default fallbacks per model, keyed `<provider>/<model>` (the body's model on that provider), each an
 * ordered list in the syntax of the `x-proxy-fallback` header (docs/fallbacks.md).
 */
export type FallbackDefaults = Record<string, string[]>;

/** One change to a token's settings: its tags, its limits or its default fallbacks (each replaces what it had). */
export type TokenUpdate = { tags: Tags } | { limits: TokenLimits } | { fallbacks: FallbackDefaults };

export interface AccountStore {
  createAccount(input: { accountId: string; name?: string; createdAt: string }): Promise<void>;
  accountExists(accountId: string): Promise<boolean>;
  putToken(token: TokenRecord): Promise<void>;
  getToken(accountId: string, tokenId: string): Promise<TokenRecord | undefined>;
  listTokens(accountId: string): Promise<TokenRecord[]>;
  revokeToken(accountId: string, tokenId: string, revokedAt: string): Promise<boolean>;
  /** Writes the token item and its gate together; false when the account has no such token. */
  updateToken(accountId: string, tokenId: string, update: TokenUpdate): Promise<boolean>;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds at which the oldest request counted in the sliding minute leaves it (room grows again). */
  resetAt: number;
}

/**
 * What the token gate found for a presented token, in one store call: the token's record, its
 * rate count for this minute (counted only when the token is real, unrevoked and under the
 * limit), and whether the token has a budget of its own.
 */
export type GateVerdict =
  | { kind: 'admitted' | 'limited'; record: TokenRecord; rateLimit: RateLimitDecision; tokenBudget: boolean }
  /** Unknown token, wrong secret or revoked: nothing was counted. `record` is the stored one, when there is one. */
  | { kind: 'refused'; record?: TokenRecord };

/** A token as a request presents it: the ids it names and the SHA-256 of its secret (hex). */
export interface PresentedToken {
  accountId: string;
  tokenId: string;
  secretHash: string;
}

export interface TokenGate {
  /** Checks the token and counts one request against its current minute, atomically across instances. */
  admit(token: PresentedToken, now: number): Promise<GateVerdict>;
}
