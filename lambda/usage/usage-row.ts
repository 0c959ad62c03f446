import type { ProviderId } from '../providers/registry';
import type { EndpointKind } from '../providers/types';
import type { Tags } from '../tags/tags';

/**
 * One row per request (docs/usage-and-pricing.md, "The usage row"), as stored and as `/api/logs` returns it.
 * Money is kept in integer nano-dollars (`*_nanos`); `cost_usd`/`saved_usd` are derived for readers.
 */
export interface UsageRow {
  account_id: string;
  /** Equals the `x-proxy-request-id` response header. */
  id: string;
  /** ISO 8601 time the request arrived. */
  ts: string;
  provider: ProviderId;
  /** Which endpoint: `chat`, `messages`, `responses`, `embeddings`, `count_tokens`, `models`, or `other` (any further path). */
  kind: EndpointKind;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /**
   * Server-side tool calls the provider ran and bills per call, by its own counter names
   * (`{"web_search_requests": 3}`); absent when there were none. Those the price data prices are in the cost.
   */
  server_tool_use?: Record<string, number>;
  cost_usd: number;
  cost_nanos: number;
  /** False when the model had no known price: tokens are logged, cost is 0. */
  priced: boolean;
  /** Where the price came from: `genai-prices@<version>` (built in) or `PRICING_FILE`; absent when the model has no price. */
  price_source?: string;
  /**
   * The model whose price was charged when it is not `model`: the answer named a model without a price
   * (`gpt-4o-mini-custom-snapshot-zz`), so the requested one's (`gpt-4o-mini`) applied. Absent otherwise.
   */
  priced_as?: string;
  /**
   * The stream was cut off before the provider reported all of its usage: its tokens (and so its cost)
   * are partly estimated (docs/usage-and-pricing.md, "Cut-off streams"); absent for exact figures.
   */
  usage_estimated?: true;
  latency_ms: number;
  requester?: string;
  /** The request's and its token's tags (docs/tags.md); absent when there are none. A map, so the DynamoDB console shows each tag. */
  tags?: Tags;
  status_code: number;
  cached: boolean;
  saved_usd: number;
  saved_nanos: number;
  stream: boolean;
  /** The provider's error message, or what went wrong between proxy and provider. */
  error?: string;
  mode: 'stored' | 'pass-through';
  token_id: string;
  /**
   * Every attempt at a provider when there was more than one, or a fallback answered
   * (docs/fallbacks.md): the target (`<provider>/<model>`), its status or what happened instead, how long it took.
   */
  attempts?: UpstreamAttempt[];
  /** The label of the stored key that served the answer (docs/fallbacks.md, "Key pools"); absent in pass-through mode. */
  key_label?: string;
  /** Its last four characters, as `GET /api/keys` shows them. */
  key_hint?: string;
}

/** One attempt at a provider, as a row records it. */
export interface UpstreamAttempt {
  target: string;
  status: number | 'reset' | 'timeout' | 'no-first-byte';
  duration_ms: number;
  /** The label of the stored key it sent. */
  key?: string;
}

/** Labels are kept readable and rows far below DynamoDB's 400 KB item limit, whatever a client or provider sends. */
export const rowLabel = (text: string | undefined, max: number) =>
  text && text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** The longest requester label a row keeps whole; a longer `x-proxy-user` is cut to this length. */
export const REQUESTER_MAX_CHARS = 8_192;

/** The requester label as a row stores it, and as requester budgets and their spend are keyed. */
export const requesterLabel = (text: string | undefined) => rowLabel(text, REQUESTER_MAX_CHARS);

export interface LogQuery {
  limit: number;
  cursor?: string;
  from?: string;
  to?: string;
  provider?: string;
  kind?: EndpointKind;
  /** A prefix: `gpt-4o` matches `gpt-4o` and `gpt-4o-mini-2024-07-18`. */
  model?: string;
  requester?: string;
  /** The proxy token that sent the request. */
  token_id?: string;
  /** Tags every one of which the row must carry. */
  tags?: Tags;
  cached?: boolean;
  /** `ok`: status < 400; `error`: status >= 400. */
  status?: 'ok' | 'error';
}

export interface UsageLog {
  /**
   * Writes the row. Idempotent: the row is keyed by its own time and id, so a
   * retry leaves exactly one row. Throws when the store refused; the writer retries.
   */
  write(row: UsageRow): Promise<void>;
  query(accountId: string, query: LogQuery): Promise<{ items: UsageRow[]; nextCursor: string | null }>;
  /** One row of the account by its request id (`x-proxy-request-id`); undefined when there is none. */
  find(accountId: string, id: string): Promise<UsageRow | undefined>;
}
