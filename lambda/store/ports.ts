/**
 * Storage ports: one small interface per concern. The DynamoDB adapters in
 * `dynamodb/` implement them; nothing outside `deps.ts` knows which adapter is used.
 */
import type { Budget, BudgetStatus, BudgetSubject } from '../budgets/budget';
import type { ProviderId } from '../providers/registry';

export type Scope = 'proxy' | 'manage';

export interface TokenRecord {
  accountId: string;
  tokenId: string;
  name?: string;
  scopes: Scope[];
  /** SHA-256 of the token's secret part, hex. The token itself is never stored. */
  secretHash: string;
  createdAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
}

export interface AccountStore {
  createAccount(input: { accountId: string; name?: string; createdAt: string }): Promise<void>;
  accountExists(accountId: string): Promise<boolean>;
  putToken(token: TokenRecord): Promise<void>;
  getToken(accountId: string, tokenId: string): Promise<TokenRecord | undefined>;
  listTokens(accountId: string): Promise<TokenRecord[]>;
  revokeToken(accountId: string, tokenId: string, revokedAt: string): Promise<boolean>;
  touchToken(accountId: string, tokenId: string, usedAt: string): Promise<void>;
}

/** An envelope-encrypted provider key as stored: AES-256-GCM ciphertext plus the wrapped data key. */
export interface EncryptedSecret {
  ciphertext: Uint8Array;
  iv: Uint8Array;
  wrappedKey: Uint8Array;
  /** Which key wrapped the data key (`kms:<key id>` or `local:<key id>`), so a wrong adapter fails clearly. */
  keyRef: string;
}

export interface StoredProviderKey {
  provider: ProviderId;
  secret: EncryptedSecret;
  /** Last four characters of the key, for recognising it in the dashboard. */
  hint: string;
  updatedAt: string;
}

export interface ProviderKeyStore {
  get(accountId: string, provider: ProviderId): Promise<StoredProviderKey | undefined>;
  put(accountId: string, key: StoredProviderKey): Promise<void>;
  delete(accountId: string, provider: ProviderId): Promise<boolean>;
  list(accountId: string): Promise<StoredProviderKey[]>;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds at which the current window ends. */
  resetAt: number;
}

export interface RateLimiter {
  /** Counts one request against the token's current window, atomically across instances. */
  hit(tokenId: string, now: number): Promise<RateLimitDecision>;
  /**
   * Gives back the hit behind `decision` when it turned out not to be a real
   * request (its credential was wrong): only a hit that was counted, and in the
   * window it was counted in. A refused hit counted nothing and gives nothing back.
   */
  refund(tokenId: string, decision: RateLimitDecision): Promise<void>;
}

/** Binds a ciphertext to the account and provider it belongs to. */
export interface EncryptionContext {
  account_id: string;
  provider: string;
}

export interface SecretSealer {
  seal(plaintext: string, context: EncryptionContext): Promise<EncryptedSecret>;
  open(secret: EncryptedSecret, context: EncryptionContext): Promise<string>;
}

/**
 * Spend limits per proxy token and per requester label, with the spend
 * counters they are checked against (see README "Budgets"). The counters are
 * added to by the usage log, in the same write as each row.
 */
export interface BudgetStore {
  /**
   * The budgets that apply to one proxied request, with the spend of their
   * current period at `at`. Issued in the same tick as the token read, it
   * joins that read's single store call.
   */
  statusesFor(accountId: string, tokenId: string, requester: string | undefined, at: number): Promise<BudgetStatus[]>;
  /** One subject's budget with its spend at `at`; undefined when it has none. */
  statusOf(accountId: string, subject: BudgetSubject, at: number): Promise<BudgetStatus | undefined>;
  setBudget(accountId: string, subject: BudgetSubject, budget: Budget, updatedAt: string): Promise<void>;
  /** False when the subject had no budget. */
  removeBudget(accountId: string, subject: BudgetSubject): Promise<boolean>;
  /** Every budget of one kind in the account, with its current spend. */
  listBudgets(accountId: string, kind: BudgetSubject['kind'], at: number): Promise<BudgetStatus[]>;
}
