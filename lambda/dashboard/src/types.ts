/** Shapes of the management API as the dashboard reads them (see CONTRACT.md, "Management API"). */

export type ProviderId = 'prov-a' | 'prov-b' | 'prov-c' | 'prov-d' | 'prov-e';

export interface StoredKey {
  provider: ProviderId;
  hint: string;
  updated_at: string;
}

export interface LogRow {
  id: string;
  ts: string;
  provider: ProviderId;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  cost_usd: number;
  latency_ms: number;
  requester?: string;
  status_code: number;
  cached: boolean;
  saved_usd: number;
  stream: boolean;
  error?: string;
  priced?: boolean;
  mode?: 'stored' | 'pass-through';
}

export interface LogPage {
  items: LogRow[];
  next_cursor: string | null;
}

export interface Totals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  savings_usd: number;
  cache_hits: number;
  errors: number;
  latency_avg_ms: number;
  latency_p95_ms: number;
}

export interface DayTotals extends Totals {
  /** `YYYY-MM-DD` */
  day: string;
  by_provider: Partial<Record<string, { requests: number; cost_usd: number }>>;
}

export interface Stats {
  from: string;
  to: string;
  totals: Totals;
  by_day: DayTotals[];
  by_provider: (Totals & { provider: string })[];
  by_model: (Totals & { model: string; provider: string })[];
  by_requester: (Totals & { requester: string })[];
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
