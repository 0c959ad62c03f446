import { readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import bundled from './prices.json';
import { PriceTable, type PriceEntry } from './price-table';

/**
 * LiteLLM's `model_prices_and_context_window.json`: USD per token, keys that may
 * carry a provider prefix (`groq/llama-…`), and non-chat entries to skip.
 */
interface LiteLlmEntry {
  input_cost_per_token?: number;
  output_cost_per_token?: number;
  cache_read_input_token_cost?: number;
  cache_creation_input_token_cost?: number;
  litellm_provider?: string;
  mode?: string;
}

const PER_MILLION = 1_000_000;

/** LiteLLM's names for the providers this proxy serves; other prefixes (azure/, bedrock/…) price other hosts. */
const OUR_LITELLM_PROVIDERS = new Set(['anthropic', 'openai', 'gemini', 'mistral', 'groq', 'text-completion-openai']);

export function fromLiteLlm(document: Record<string, LiteLlmEntry>): Record<string, PriceEntry> {
  const entries: Record<string, PriceEntry> = {};
  // Prefixed keys first, so an unprefixed key of the same model wins.
  const keys = Object.keys(document).sort((a, b) => Number(!a.includes('/')) - Number(!b.includes('/')));
  for (const key of keys) {
    const value = document[key];
    // Embedding entries carry no output price: they generate nothing.
    const output = value?.output_cost_per_token ?? (value?.mode === 'embedding' ? 0 : undefined);
    if (typeof value?.input_cost_per_token !== 'number' || typeof output !== 'number') continue;
    const provider = value.litellm_provider;
    const prefixed = provider !== undefined && key.startsWith(`${provider}/`);
    if (prefixed && !OUR_LITELLM_PROVIDERS.has(provider)) continue;
    const model = prefixed ? key.slice(provider.length + 1) : key;
    entries[model] = {
      input: value.input_cost_per_token * PER_MILLION,
      output: output * PER_MILLION,
      cache_read: value.cache_read_input_token_cost === undefined ? undefined : value.cache_read_input_token_cost * PER_MILLION,
      cache_write: value.cache_creation_input_token_cost === undefined ? undefined : value.cache_creation_input_token_cost * PER_MILLION,
    };
  }
  return entries;
}

const rate = z.number().check(z.gte(0), z.refine(Number.isFinite, 'must be a finite number'));
const ProjectFormat = z.object({
  models: z.record(z.string(), z.object({ input: rate, output: rate, cache_read: z.optional(rate), cache_write: z.optional(rate) })),
});

/** Accepts the project's own format (`{models:{…}}`, USD per million tokens) or LiteLLM's. */
export function parsePriceDocument(document: unknown): Record<string, PriceEntry> {
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    throw new Error('expected a JSON object: the project format {"models":{…}} or LiteLLM\'s model_prices_and_context_window.json');
  }
  if (!('models' in document)) return fromLiteLlm(document as Record<string, LiteLlmEntry>);
  const parsed = z.safeParse(ProjectFormat, document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data.models;
}

/** The bundled prices, extended or overridden by `PRICING_FILE`. */
export function loadPriceTable(pricingFile?: string): PriceTable {
  const base = (bundled as { models: Record<string, PriceEntry> }).models;
  if (!pricingFile) return new PriceTable(base);
  try {
    return new PriceTable({ ...base, ...parsePriceDocument(JSON.parse(readFileSync(pricingFile, 'utf8'))) });
  } catch (error) {
    throw new Error(`PRICING_FILE ${pricingFile}: ${(error as Error).message}`);
  }
}
