/** Shapes of the management API as the dashboard reads them (see docs/management-api.md). */

// The server's own types, imported as types only: nothing of the server ends up in the bundle.
import type { SentAlertJson } from '../../api/alert-routes';
import type { AuditEntryJson } from '../../api/audit-routes';
import type { SessionJson } from '../../api/sign-in-routes';
import type { BudgetJson } from '../../api/budget-routes';
import type { PriceInput, PriceJson } from '../../api/price-routes';
import type { ProviderId } from '../../providers/catalog';
import type { StatsSummary, StatsTotals, ProviderSlice, TokenStats } from '../../usage/usage-stats';
import type { UsageRow } from '../../usage/usage-row';

export type { ProviderId };

/** An account's own price for a model id or pattern (docs/usage-and-pricing.md, "Account prices"). */
export type AccountPrice = PriceJson;
export type { PriceInput };

/** One model's default fallbacks, in order (docs/fallbacks.md, "Defaults"). */
export interface FallbackDefault {
  provider: string;
  model: string;
  fallbacks: string[];
}

/** The account's default fallbacks and limits (seconds; null: the default). */
export interface FallbackSettings {
  fallbacks: FallbackDefault[];
  first_token_timeout: number | null;
  stall_timeout: number | null;
}

/** Where the proxy's AWS signing credentials come from, and what its last look for them found (docs/bedrock.md). */
export interface Signing {
  source: 'aws-role' | 'local-credential-chain';
  credentials: 'not-looked-up' | 'found' | 'none-found';
}

export interface StoredKey {
  provider: ProviderId;
  hint: string;
  updated_at: string;
}

/** A row as `/api/logs` returns it (storage-only attributes left out). */
export type LogRow = Omit<UsageRow, 'account_id'>;

export interface LogPage {
  items: LogRow[];
  next_cursor: string | null;
}

export type Totals = StatsTotals;
export type TokenTotals = TokenStats;
export type { ProviderSlice };
export type Stats = StatsSummary;
export type TagTotals = Stats['by_tag'][string][string];

/** Who is signed in (`GET /api/session`). */
export type SessionInfo = SessionJson;
export type Role = SessionJson['role'];

/** One audit-log entry (docs/people.md). */
export type AuditEntry = AuditEntryJson;
export interface AuditPage {
  items: AuditEntry[];
  next_cursor: string | null;
}

export interface TokenInfo {
  token_id: string;
  name: string;
  scopes: string[];
  created_at: string;
  last_used_at?: string;
  revoked_at?: string;
  /** The token this dashboard session signed in with. */
  current?: boolean;
  budget?: Budget | null;
  /** The token's own tags, added to every row it makes (docs/tags.md). */
  tags?: Tags;
  limits?: TokenLimits;
  /** Its own default fallbacks per model (docs/fallbacks.md, "Defaults"). */
  fallbacks?: FallbackDefault[];
  /** A management token's role; null for a proxy-only token. */
  role?: Role | null;
  /** Who issued it: `token:<id>` or `person:<subject>`. */
  created_by?: string | null;
}

/** Tags as `key → value`, as rows, tokens and stats carry them. */
export type Tags = Record<string, string>;

/** A token's own limits: null where it has none (the default rate, any model). */
export interface TokenLimits {
  requests_per_minute: number | null;
  models: string[] | null;
}

/** A spend limit with the spend of its current period (`resets_at` null for `total`). */
export type Budget = BudgetJson;
export type SentAlert = SentAlertJson;
export type BudgetPeriod = Budget['period'];
export type BudgetInput = Pick<Budget, 'limit_usd' | 'period'> & { alert_at?: readonly number[] };

export interface RequesterBudget extends Budget {
  requester: string;
}

export interface TagBudget extends Budget {
  key: string;
  value: string;
}

export interface CreatedToken {
  token_id: string;
  token: string;
  scopes: string[];
}

export interface Health {
  status: string;
  version: string;
}
