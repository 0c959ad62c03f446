import { readFileSync } from 'node:fs';
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
}

const PER_MILLION = 1_000_000;

export function fromLiteLlm(document: Record<string, LiteLlmEntry>): Record<string, PriceEntry> {
  const entries: Record<string, PriceEntry> = {};
  for (const [key, value] of Object.entries(document)) {
    if (typeof value?.input_cost_per_token !== 'number' || typeof value.output_cost_per_token !== 'number') continue;
    const provider = value.litellm_provider;
    const model = provider && key.startsWith(`${provider}/`) ? key.slice(provider.length + 1) : key;
    entries[model] = {
      input: value.input_cost_per_token * PER_MILLION,
      output: value.output_cost_per_token * PER_MILLION,
      cache_read: value.cache_read_input_token_cost === undefined ? undefined : value.cache_read_input_token_cost * PER_MILLION,
      cache_write: value.cache_creation_input_token_cost === undefined ? undefined : value.cache_creation_input_token_cost * PER_MILLION,
    };
  }
  return entries;
}

/** Accepts the project's own format (`{models:{…}}`, USD per million tokens) or LiteLLM's. */
export function parsePriceDocument(document: unknown): Record<string, PriceEntry> {
  if (document && typeof document === 'object' && 'models' in document) {
    return (document as { models: Record<string, PriceEntry> }).models;
  }
  if (document && typeof document === 'object') return fromLiteLlm(document as Record<string, LiteLlmEntry>);
  throw new Error('PRICING_FILE is neither the project format ({"models":{…}}) nor LiteLLM format');
}

/** The bundled prices, extended or overridden by `PRICING_FILE`. */
export function loadPriceTable(pricingFile?: string): PriceTable {
  const base = (bundled as { models: Record<string, PriceEntry> }).models;
  if (!pricingFile) return new PriceTable(base);
  const extra = parsePriceDocument(JSON.parse(readFileSync(pricingFile, 'utf8')));
  return new PriceTable({ ...base, ...extra });
}
