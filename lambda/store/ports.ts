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
  /** When the token last passed the proxy's gate (kept on its gate item). */
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
 * counters they are checked against (docs/budgets.md). The counters are
 * added to by the usage log, in the same write as each row.
 */
export interface BudgetStore {
  /** One subject's budget with its spend at `at`; undefined when it has none. */
  statusOf(accountId: string, subject: BudgetSubject, at: number): Promise<BudgetStatus | undefined>;
  setBudget(accountId: string, subject: BudgetSubject, budget: Budget, updatedAt: string): Promise<void>;
  /** False when the subject had no budget. */
  removeBudget(accountId: string, subject: BudgetSubject): Promise<boolean>;
  /** Every budget of one kind in the account, with its current spend. */
  listBudgets(accountId: string, kind: BudgetSubject['kind'], at: number): Promise<BudgetStatus[]>;
}
