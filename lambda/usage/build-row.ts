import { nanosToUsd, type Cost, type PriceTable } from '../pricing/price-table';
import type { ProviderId } from '../providers/registry';
import type { Dialect, EndpointKind } from '../providers/types';
import { NO_USAGE, type Usage } from '../providers/usage';
import { redactText } from '../streaming/redact';
import { estimateCutOff, type CutOff } from './estimate';
import type { Tags } from '../tags/tags';
import { requesterLabel, rowLabel, type UpstreamAttempt, type UsageRow } from './usage-row';

/** How a request ended, as the step that finished it saw it. */
export interface Completion {
  status: number;
  model?: string;
  usage?: Usage;
  error?: string;
  /** Served from the cache: tokens and cost are 0; `savedNanos` is what the original cost. */
  cached?: { savedNanos: number };
  /** A stream that ended before its terminal event: what it said and delivered, for an estimate. */
  cutOff?: CutOff;
  /** The provider that answered, when a fallback on another provider did. */
  provider?: ProviderId;
  /** Every attempt at a provider, when there was more than one or a fallback answered. */
  attempts?: UpstreamAttempt[];
  /**
   * Streams cut mid-answer and continued on a fallback (docs/fallbacks.md): each billed an estimate
   * of what it generated, at its own model's price, on top of the answer's exact usage.
   */
  continuedFrom?: Array<{ provider: ProviderId; model: string; cutOff: CutOff }>;
}

/** What the pipeline knows about a request by the time it is recorded. */
export interface RowFacts {
  accountId: string;
  tokenId: string;
  requestId: string;
  /** Epoch ms the request arrived. */
  receivedAt: number;
  /** `performance.now()` when the request arrived: the row's latency runs from here to when the row is built. */
  startedAt: number;
  provider: ProviderId;
  kind: EndpointKind;
  billing: Dialect['billing'];
  /** The `model` the client asked for, used when the answer named none. */
  requestedModel: unknown;
  requester: string | undefined;
  /** The request's tags joined with its token's (docs/tags.md). */
  tags: Tags;
  stream: boolean;
  mode: UsageRow['mode'];
  /**
   * The request's credentials (`searchableSecrets`): cut out of every free-text field of the row
   * (model, requester, tags, error), which every member of the account can read (SECURITY.md).
   */
  secrets: readonly string[];
}

export type Prices = Pick<PriceTable, 'cost' | 'has'>;

/**
 * The pricing hook: what a request cost. Token counting and model lists are
 * free at the provider: cost 0, and that is a known price.
 */
export function priceOf(
  facts: RowFacts,
  model: string,
  usage: Usage,
  prices: Prices,
  provider: ProviderId = facts.provider,
): Cost {
  if (facts.billing === 'free') return { nanos: 0, priced: true };
  return prices.cost(model, usage, { provider, at: facts.receivedAt });
}

/** The usage row of one request: tokens only for an answered, uncached request; labels cut to bounded lengths. */
export function buildRow(facts: RowFacts, completion: Completion, prices: Prices): UsageRow {
  const ok = completion.status < 400;
  const counted = ok && !completion.cached;
  const estimate = counted && completion.cutOff ? estimateCutOff(completion.usage, completion.cutOff) : undefined;
  const usage = counted ? (estimate?.usage ?? completion.usage ?? NO_USAGE) : NO_USAGE;
  const fullModel = completion.model ?? (typeof facts.requestedModel === 'string' ? facts.requestedModel : 'unknown');
  // Scrubbed before being cut, so no cut can leave a credential's first characters behind.
  const scrub = (text: string) => redactText(text, facts.secrets);
  const model = rowLabel(scrub(fullModel), 1_024) ?? fullModel;
  const provider = completion.provider ?? facts.provider;
  const answered = priceOf(facts, fullModel, usage, prices, provider);
  const cut = counted ? cutStreams(facts, completion, prices) : undefined;
  const cost = cut
    ? { ...answered, nanos: answered.nanos + cut.nanos, priced: answered.priced && cut.priced }
    : answered;
  const tokens = cut
    ? {
        ...usage,
        inputTokens: usage.inputTokens + cut.inputTokens,
        outputTokens: usage.outputTokens + cut.outputTokens,
      }
    : usage;
  const savedNanos = completion.cached?.savedNanos ?? 0;
  return {
    account_id: facts.accountId,
    id: facts.requestId,
    ts: new Date(facts.receivedAt).toISOString(),
    provider,
    kind: facts.kind,
    model,
    input_tokens: tokens.inputTokens,
    output_tokens: tokens.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    ...(usage.serverToolUse ? { server_tool_use: { ...usage.serverToolUse } } : {}),
    cost_nanos: cost.nanos,
    cost_usd: nanosToUsd(cost.nanos),
    priced: cost.priced || completion.cached !== undefined || !ok,
    price_source: cost.source,
    ...(estimate?.estimated || cut ? { usage_estimated: true } : {}),
    latency_ms: Math.round(performance.now() - facts.startedAt),
    requester: requesterLabel(facts.requester === undefined ? undefined : scrub(facts.requester)),
    ...(Object.keys(facts.tags).length ? { tags: scrubTags(facts.tags, scrub) } : {}),
    status_code: completion.status,
    cached: completion.cached !== undefined,
    saved_nanos: savedNanos,
    saved_usd: nanosToUsd(savedNanos),
    stream: facts.stream,
    error: rowLabel(completion.error === undefined ? undefined : scrub(completion.error), 2_000),
    mode: facts.mode,
    token_id: facts.tokenId,
    ...(completion.attempts?.length ? { attempts: completion.attempts.map((attempt) => ({ ...attempt })) } : {}),
  };
}

/** The estimated tokens and cost of the streams a fallback continued, each at its own model's price. */
function cutStreams(
  facts: RowFacts,
  completion: Completion,
  prices: Prices,
): { inputTokens: number; outputTokens: number; nanos: number; priced: boolean } | undefined {
  if (!completion.continuedFrom?.length) return undefined;
  const sum = { inputTokens: 0, outputTokens: 0, nanos: 0, priced: true };
  for (const { provider, model, cutOff } of completion.continuedFrom) {
    const { usage } = estimateCutOff(undefined, cutOff);
    const cost = priceOf(facts, model, usage, prices, provider);
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.nanos += cost.nanos;
    sum.priced &&= cost.priced;
  }
  return sum;
}

/** Tags with every credential cut out of their keys and values; the same map when there is none. */
function scrubTags(tags: Tags, scrub: (text: string) => string): Tags {
  const entries = Object.entries(tags);
  if (entries.every(([key, value]) => scrub(key) === key && scrub(value) === value)) return tags;
  return Object.fromEntries(entries.map(([key, value]) => [scrub(key), scrub(value)]));
}
