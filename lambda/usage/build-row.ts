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
  /** The stored key that served the answer (docs/fallbacks.md, "Key pools"). */
  key?: { label: string; hint: string };
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

/**
 * The cost, and the model it was priced as when that is not the answer's: a provider that answers
 * with a model id no price knows (a snapshot, a custom deployment) for a request whose model has a
 * price is charged at the requested model's price, so a budget never lets such an answer through free.
 */
function costOf(
  facts: RowFacts,
  answered: string,
  usage: Usage,
  prices: Prices,
  provider: ProviderId,
): { cost: Cost; pricedAs: string | undefined } {
  const cost = priceOf(facts, answered, usage, prices, provider);
  const requested = facts.requestedModel;
  if (cost.priced || typeof requested !== 'string' || requested === answered) return { cost, pricedAs: undefined };
  const asRequested = priceOf(facts, requested, usage, prices, provider);
  return asRequested.priced ? { cost: asRequested, pricedAs: requested } : { cost, pricedAs: undefined };
}

/** The usage row of one request: tokens only for an answered, uncached request; labels cut to bounded lengths. */
export function buildRow(facts: RowFacts, completion: Completion, prices: Prices): UsageRow {
  const ok = completion.status < 400;
  const counted = ok && !completion.cached;
  const estimate = counted && completion.cutOff ? estimateCutOff(completion.usage, completion.cutOff) : undefined;
  const answeredUsage = counted ? (estimate?.usage ?? completion.usage ?? NO_USAGE) : NO_USAGE;
  const provider = completion.provider ?? facts.provider;
  // A stream continued on a fallback adds its cut predecessors' estimates, each at its own price.
  const cut = counted ? cutStreams(facts, completion, prices) : undefined;
  const reported = cut
    ? {
        ...answeredUsage,
        inputTokens: answeredUsage.inputTokens + cut.inputTokens,
        outputTokens: answeredUsage.outputTokens + cut.outputTokens,
      }
    : answeredUsage;
  const fullModel = completion.model ?? (typeof facts.requestedModel === 'string' ? facts.requestedModel : 'unknown');
  // Scrubbed before being cut, so no cut can leave a credential's first characters behind.
  const scrub = (text: string) => redactText(text, facts.secrets);
  const model = rowLabel(scrub(fullModel), 1_024) ?? fullModel;
  const answeredCost = costOf(facts, fullModel, answeredUsage, prices, provider);
  const reportedCost: Cost = cut
    ? {
        ...answeredCost.cost,
        nanos: answeredCost.cost.nanos + cut.nanos,
        priced: answeredCost.cost.priced && cut.priced,
      }
    : answeredCost.cost;
  const reportedAs = answeredCost.pricedAs;
  // A figure a row cannot hold exactly is not stored approximately: the row says so instead (docs/usage-and-pricing.md).
  const malformed = !storable(reported, reportedCost);
  const usage = malformed ? NO_USAGE : reported;
  const cost: Cost = malformed ? { nanos: 0, priced: false } : reportedCost;
  const pricedAs = malformed ? undefined : reportedAs;
  const error = malformed ? UNSTORABLE_USAGE : completion.error;
  const savedNanos = completion.cached?.savedNanos ?? 0;
  return {
    account_id: facts.accountId,
    id: facts.requestId,
    ts: new Date(facts.receivedAt).toISOString(),
    provider,
    kind: facts.kind,
    model,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    ...(usage.serverToolUse ? { server_tool_use: { ...usage.serverToolUse } } : {}),
    cost_nanos: cost.nanos,
    cost_usd: nanosToUsd(cost.nanos),
    priced: !malformed && (cost.priced || completion.cached !== undefined || !ok),
    price_source: cost.source,
    ...(pricedAs === undefined ? {} : { priced_as: rowLabel(scrub(pricedAs), 1_024) }),
    ...(estimate?.estimated || cut ? { usage_estimated: true } : {}),
    latency_ms: Math.round(performance.now() - facts.startedAt),
    requester: requesterLabel(facts.requester === undefined ? undefined : scrub(facts.requester)),
    ...(Object.keys(facts.tags).length ? { tags: scrubTags(facts.tags, scrub) } : {}),
    status_code: completion.status,
    cached: completion.cached !== undefined,
    saved_nanos: savedNanos,
    saved_usd: nanosToUsd(savedNanos),
    stream: facts.stream,
    error: rowLabel(error === undefined ? undefined : scrub(error), 2_000),
    mode: facts.mode,
    token_id: facts.tokenId,
    ...(completion.attempts?.length ? { attempts: completion.attempts.map((attempt) => ({ ...attempt })) } : {}),
    ...(completion.key ? { key_label: completion.key.label, key_hint: completion.key.hint } : {}),
  };
}

/**
 * What a row says when the provider reported usage it cannot hold exactly: a count, or a cost in
 * nano-dollars, beyond 2^53 − 1 (9,007,199,254,740,991), which a JSON number (and the row's readers)
 * no longer represents exactly. No real answer comes near it: such a report is malformed.
 */
export const UNSTORABLE_USAGE =
  'The provider reported usage beyond 2^53 - 1 (a token count, or a cost in nano-dollars): not recorded, tokens and cost kept at 0.';

/** Whether every count of the usage and its cost are integers a row holds exactly. */
function storable(usage: Usage, cost: Cost): boolean {
  const counts = [
    usage.inputTokens,
    usage.outputTokens,
    usage.cacheReadTokens,
    usage.cacheWriteTokens,
    usage.cacheWrite1hTokens ?? 0,
    ...[usage.media?.audioInput, usage.media?.audioOutput, usage.media?.imageInput, usage.media?.imageOutput].map(
      (count) => count ?? 0,
    ),
    ...Object.values(usage.serverToolUse ?? {}),
    cost.nanos,
  ];
  return counts.every((count) => Math.abs(count) <= Number.MAX_SAFE_INTEGER);
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
