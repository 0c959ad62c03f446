import { readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import { catalogEntry, PROVIDER_CATALOG, PROVIDER_IDS } from '../providers/catalog';
import type { ModelRates } from './rates';
import { picoPerToken, type Rate } from './rates';
import { NO_OVERRIDES, PriceTable, type OverrideEntry, type Overrides } from './price-table';

/**
 * LiteLLM's `model_prices_and_context_window.json`: USD per token, keys that may
 * carry a provider prefix (`groq/llama-…`), the platform in `litellm_provider`.
 */
interface LiteLlmEntry {
  mode?: string;
  litellm_provider?: string;
  input_cost_per_token?: number;
  output_cost_per_token?: number;
  cache_read_input_token_cost?: number;
  cache_creation_input_token_cost?: number;
  cache_creation_input_token_cost_above_1hr?: number;
  input_cost_per_token_above_200k_tokens?: number;
  output_cost_per_token_above_200k_tokens?: number;
  cache_read_input_token_cost_above_200k_tokens?: number;
  cache_creation_input_token_cost_above_200k_tokens?: number;
}

/** Kinds of LiteLLM entry priced per token that this proxy serves. */
const TOKEN_MODES = new Set([undefined, 'chat', 'completion', 'responses', 'embedding']);
const LONG_CONTEXT = 200_000;

/** A LiteLLM per-token price (with its >200k price, if any) as an integer rate. */
function liteLlmRate(perToken: number | undefined, above200k?: number): Rate | undefined {
  if (typeof perToken !== 'number' || !Number.isFinite(perToken) || perToken < 0) return undefined;
  const tiers =
    typeof above200k === 'number' && Number.isFinite(above200k)
      ? [{ above: LONG_CONTEXT, pico: picoPerToken(above200k * 1e6) }]
      : [];
  return { base: picoPerToken(perToken * 1e6), tiers };
}

/**
 * The entries of a LiteLLM file that price this proxy's providers. Only a
 * provider's own rows count (`gemini/…` for Gemini, `mistral/…`, `groq/…`, and
 * OpenAI's and Anthropic's unprefixed ones); other platforms' rows for the same
 * models (Vertex, Bedrock, Azure, …) are ignored. Where a provider has both a
 * prefixed and an unprefixed row for one model, the prefixed one wins.
 */
export function fromLiteLlm(document: Record<string, LiteLlmEntry>): Overrides {
  const byLiteLlm = new Map<string, string>(
    PROVIDER_CATALOG.flatMap((provider) => provider.prices.litellm.map((name) => [name, provider.id] as const)),
  );
  const byProvider = new Map<string, Map<string, OverrideEntry>>();
  // Unprefixed keys first, so a provider's prefixed row of the same model replaces them.
  const keys = Object.keys(document).sort((a, b) => Number(a.includes('/')) - Number(b.includes('/')));
  for (const key of keys) {
    const entry = document[key];
    const provider = entry?.litellm_provider && byLiteLlm.get(entry.litellm_provider);
    if (!provider || !TOKEN_MODES.has(entry.mode)) continue;
    const input = liteLlmRate(entry.input_cost_per_token, entry.input_cost_per_token_above_200k_tokens);
    if (!input) continue;
    const rates: ModelRates = {
      input,
      output: liteLlmRate(entry.output_cost_per_token ?? 0, entry.output_cost_per_token_above_200k_tokens),
      cacheRead: liteLlmRate(entry.cache_read_input_token_cost, entry.cache_read_input_token_cost_above_200k_tokens),
      cacheWrite: liteLlmRate(
        entry.cache_creation_input_token_cost,
        entry.cache_creation_input_token_cost_above_200k_tokens,
      ),
      cacheWrite1h: liteLlmRate(entry.cache_creation_input_token_cost_above_1hr),
    };
    const prefix = `${entry.litellm_provider}/`;
    const model = (key.startsWith(prefix) ? key.slice(prefix.length) : key).toLowerCase();
    let models = byProvider.get(provider);
    if (!models) byProvider.set(provider, (models = new Map<string, OverrideEntry>()));
    models.set(model, { periods: [{ rates }], prefix: false });
  }
  return { all: new Map(), byProvider };
}

const perMillion = z.number().check(z.gte(0), z.refine(Number.isFinite, 'must be a finite number'));
const tier = z.object({
  above_input_tokens: z.number().check(z.int(), z.gte(0)),
  input: z.optional(perMillion),
  output: z.optional(perMillion),
  cache_read: z.optional(perMillion),
  cache_write: z.optional(perMillion),
  cache_write_1h: z.optional(perMillion),
});
const projectEntry = z.object({
  input: perMillion,
  output: perMillion,
  cache_read: z.optional(perMillion),
  cache_write: z.optional(perMillion),
  cache_write_1h: z.optional(perMillion),
  tiers: z.optional(z.array(tier)),
});
const models = z.record(z.string(), projectEntry);
const ProjectFormat = z.object({ models: z.optional(models), providers: z.optional(z.record(z.string(), models)) });
type ProjectEntry = z.infer<typeof projectEntry>;

type RateField = 'input' | 'output' | 'cache_read' | 'cache_write' | 'cache_write_1h';

function projectRates(entry: ProjectEntry): ModelRates {
  const rate = (field: RateField): Rate | undefined => {
    const base = entry[field];
    if (base === undefined) return undefined;
    const tiers = (entry.tiers ?? [])
      .filter((t) => t[field] !== undefined)
      .sort((a, b) => a.above_input_tokens - b.above_input_tokens)
      .map((t) => ({ above: t.above_input_tokens, pico: picoPerToken(t[field]!) }));
    return { base: picoPerToken(base), tiers };
  };
  return {
    input: rate('input'),
    output: rate('output'),
    cacheRead: rate('cache_read'),
    cacheWrite: rate('cache_write'),
    cacheWrite1h: rate('cache_write_1h'),
  };
}

function projectEntries(entries: Record<string, ProjectEntry> | undefined): Map<string, OverrideEntry> {
  return new Map(
    Object.entries(entries ?? {}).map(([model, entry]) => [
      model.toLowerCase(),
      { periods: [{ rates: projectRates(entry) }], prefix: true },
    ]),
  );
}

/**
 * Accepts the project's own format (`{models:{…}, providers:{"prov-d":{…}}}`, USD
 * per million tokens, docs/usage-and-pricing.md, "Pricing") or LiteLLM's.
 */
export function parsePriceDocument(document: unknown): Overrides {
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    throw new Error(
      'expected a JSON object: the project format {"models":{…}} or LiteLLM\'s model_prices_and_context_window.json',
    );
  }
  if (!('models' in document) && !('providers' in document))
    return fromLiteLlm(document as Record<string, LiteLlmEntry>);
  const parsed = z.safeParse(ProjectFormat, document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue.path.join('.')}: ${issue.message}`);
  }
  const byProvider = new Map<string, Map<string, OverrideEntry>>();
  for (const [provider, entries] of Object.entries(parsed.data.providers ?? {})) {
    if (!catalogEntry(provider))
      throw new Error(`providers.${provider}: unknown provider (expected one of ${PROVIDER_IDS.join(', ')})`);
    byProvider.set(provider, projectEntries(entries));
  }
  return { all: projectEntries(parsed.data.models), byProvider };
}

const catalogProviderOf = (provider: string) => catalogEntry(provider)?.prices.catalog;

/** The built-in prices, extended or overridden by `PRICING_FILE`. */
export function loadPriceTable(pricingFile?: string): PriceTable {
  if (!pricingFile) return new PriceTable(catalogProviderOf, NO_OVERRIDES);
  try {
    return new PriceTable(catalogProviderOf, parsePriceDocument(JSON.parse(readFileSync(pricingFile, 'utf8'))));
  } catch (error) {
    throw new Error(`PRICING_FILE ${pricingFile}: ${(error as Error).message}`);
  }
}
