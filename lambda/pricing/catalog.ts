import catalogData from './catalog.json';
import correctionsData from './corrections.json';
import { matches, withDashedDate, type MatchRule } from './model-match';
import { picoPerCall, toRate, type ModelRates, type PerMillion, type PricePeriod, type ToolCounters } from './rates';

/** Token prices in the price data's own field names. */
export interface PriceFields {
  input_mtok?: PerMillion;
  output_mtok?: PerMillion;
  cache_read_mtok?: PerMillion;
  cache_write_mtok?: PerMillion;
  cache_write_1h_mtok?: PerMillion;
  /** Audio and image tokens, where the model prices them apart from text. */
  input_audio_mtok?: PerMillion;
  output_audio_mtok?: PerMillion;
  input_image_mtok?: PerMillion;
  output_image_mtok?: PerMillion;
  /** Server-side tool calls, USD per thousand: `web_searches_kcount` and the like. */
  [perThousandCalls: `${string}_kcount`]: number | undefined;
}

interface CatalogModel {
  id: string;
  match: MatchRule;
  prices: PriceFields | Array<{ constraint?: { start_date: string }; prices: PriceFields }>;
}

interface CatalogFile {
  source: string;
  /** Per price data provider: its usage's `server_tool_use` counter → the price data's unit. */
  server_tool_counters?: Record<string, ToolCounters>;
  providers: Record<string, CatalogModel[]>;
}

const catalog = catalogData as unknown as CatalogFile;
const corrections = correctionsData as unknown as CatalogFile;

export function ratesFromFields(fields: PriceFields): ModelRates {
  const rate = (price: PerMillion | undefined) => (price === undefined ? undefined : toRate(price));
  const rates: ModelRates = {
    input: rate(fields.input_mtok),
    output: rate(fields.output_mtok),
    cacheRead: rate(fields.cache_read_mtok),
    cacheWrite: rate(fields.cache_write_mtok),
    cacheWrite1h: rate(fields.cache_write_1h_mtok),
    audioInput: rate(fields.input_audio_mtok),
    audioOutput: rate(fields.output_audio_mtok),
    imageInput: rate(fields.input_image_mtok),
    imageOutput: rate(fields.output_image_mtok),
  };
  const perCall: Record<string, number> = {};
  for (const [key, price] of Object.entries(fields))
    if (key.endsWith('_kcount') && typeof price === 'number')
      perCall[key.slice(0, -'_kcount'.length)] = picoPerCall(price);
  if (Object.keys(perCall).length) rates.perCall = perCall;
  // A model listed without any price is free.
  if (!rates.input && !rates.output) rates.input = rates.output = { base: 0, tiers: [] };
  return rates;
}

function periodsOf(model: CatalogModel): PricePeriod[] {
  if (!Array.isArray(model.prices)) return [{ rates: ratesFromFields(model.prices) }];
  return model.prices.map((period) => ({
    from: period.constraint ? Date.parse(`${period.constraint.start_date}T00:00:00Z`) : undefined,
    rates: ratesFromFields(period.prices),
  }));
}

export interface CatalogMatch {
  /** The price data's id of the model the id matched. */
  id: string;
  periods: PricePeriod[];
  /** As rows name it: `genai-prices@<version>`, or `project corrections`. */
  source: string;
}

/**
 * The built-in price data: one list of models per provider, each with match
 * rules; the first model whose rules match the id is the one priced (the data's
 * own order puts specific rules before broad ones). An id with a compact date
 * (`-20250514`) is tried again with a dashed one. The project's corrections are
 * looked at first.
 */
export function findInCatalog(catalogProvider: string, modelId: string): CatalogMatch | undefined {
  return findIn(corrections, catalogProvider, modelId) ?? findIn(catalog, catalogProvider, modelId);
}

function findIn(data: CatalogFile, catalogProvider: string, modelId: string): CatalogMatch | undefined {
  const models = data.providers[catalogProvider];
  if (!models) return undefined;
  const id = modelId.trim().replace(/^models\//, '');
  const find = (candidate: string) => models.find((model) => matches(model.match, candidate));
  let model = find(id);
  if (!model) {
    const dashed = withDashedDate(id);
    if (dashed !== id) model = find(dashed);
  }
  return model && { id: model.id, periods: periodsOf(model), source: data.source };
}

/** How the built-in data reads a provider's server-side tool calls (none for most providers). */
export function toolCountersOf(catalogProvider: string): ToolCounters {
  return catalog.server_tool_counters?.[catalogProvider] ?? {};
}
