import type { Deps } from '../deps';
import { nanosToUsd } from '../pricing/price-table';
import { NO_USAGE, type Usage } from '../providers/usage';
import { requesterLabel, rowLabel, type UsageRow } from '../usage/usage-row';
import type { ProxyState } from './state';

export interface Completion {
  status: number;
  model?: string;
  usage?: Usage;
  error?: string;
  /** Served from the cache: tokens and cost are 0; `savedNanos` is what the original cost. */
  cached?: { savedNanos: number };
}

/**
 * The last step: one usage row per request. It runs after the response has
 * gone out and is tracked as background work, so the runtime doesn't stop
 * before the row is written.
 */
export function recordUsage(deps: Deps, state: ProxyState, completion: Completion): UsageRow | undefined {
  if (!state.token) return undefined;
  const row = buildRow(deps, state, completion);
  state.work.add(deps.rowWriter.write(row));
  return row;
}

const label = rowLabel;

export function buildRow(deps: Deps, state: ProxyState, completion: Completion): UsageRow {
  const ok = completion.status < 400;
  const usage = ok && !completion.cached ? (completion.usage ?? NO_USAGE) : NO_USAGE;
  const fullModel = completion.model ?? (typeof state.body?.model === 'string' ? state.body.model : 'unknown');
  const model = label(fullModel, 1_024)!;
  // Token counting and model lists are free at the provider: cost 0, and that is a known price.
  const cost = state.endpoint.dialect.billing === 'free' ? { nanos: 0, priced: true } : deps.prices.cost(fullModel, usage, { provider: state.provider.id, at: state.request.receivedAt });
  const savedNanos = completion.cached?.savedNanos ?? 0;
  return {
    account_id: state.token!.accountId,
    id: state.request.id,
    ts: new Date(state.request.receivedAt).toISOString(),
    provider: state.provider.id,
    kind: state.endpoint.kind,
    model,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    cost_nanos: cost.nanos,
    cost_usd: nanosToUsd(cost.nanos),
    priced: cost.priced || completion.cached !== undefined || !ok,
    price_source: cost.source,
    latency_ms: Math.round(performance.now() - state.request.startedAt),
    requester: requesterLabel(state.requester),
    status_code: completion.status,
    cached: completion.cached !== undefined,
    saved_nanos: savedNanos,
    saved_usd: nanosToUsd(savedNanos),
    stream: state.stream,
    error: label(completion.error, 2_000),
    mode: state.mode,
    token_id: state.token!.tokenId,
  };
}
