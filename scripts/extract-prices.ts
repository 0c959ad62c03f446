// Extracts the built-in price data from @pydantic/genai-prices (MIT licence) into
// lambda/pricing/catalog.json: only the providers the proxy serves, only the
// fields pricing needs (match rules, token prices, the prices of server-side tool calls
// and where each provider's usage reports those calls), so the Lambda bundle carries
// about 40 KB of prices instead of the package's 830 KB.
//
//   npx tsx scripts/extract-prices.ts          write the file
//   npx tsx scripts/extract-prices.ts --check  exit 1 if the file differs from the installed package
//
// After `npm install @pydantic/genai-prices@<new version>`, run it and commit the result.
import { readFileSync, writeFileSync } from 'node:fs';
import { findProvider, type ModelPrice } from '@pydantic/genai-prices';
import { PROVIDER_CATALOG } from '../lambda/providers/catalog';

// The package does not export its package.json; read it from where it is installed.
const { version } = JSON.parse(
  readFileSync(new URL('../node_modules/@pydantic/genai-prices/package.json', import.meta.url), 'utf8'),
);
const OUT = new URL('../lambda/pricing/catalog.json', import.meta.url);

/** The price data's provider ids, as the proxy's provider catalog names them. */
const PROVIDERS = PROVIDER_CATALOG.map((provider) => provider.prices.catalog);

/**
 * The price data's server-side tool units (its `tool_calls` family), each priced per 1,000 calls
 * under `<unit>_kcount`.
 */
const TOOL_UNITS = ['web_searches', 'code_executions', 'storage_searches', 'social_searches'];

/**
 * Prices the proxy's usage rows can carry: tokens (audio and image tokens among them), and tool calls;
 * other units (audio hours, cached audio and image reads) are left out.
 */
const KEPT_PRICES = [
  'input_mtok',
  'output_mtok',
  'cache_read_mtok',
  'cache_write_mtok',
  'cache_write_1h_mtok',
  'input_audio_mtok',
  'output_audio_mtok',
  'input_image_mtok',
  'output_image_mtok',
  ...TOOL_UNITS.map((unit) => `${unit}_kcount`),
];

function keptPrices(prices: ModelPrice): ModelPrice {
  const kept: ModelPrice = {};
  for (const key of KEPT_PRICES) if (prices[key] !== undefined) kept[key] = prices[key];
  return kept;
}

/**
 * Where the provider's usage extraction finds tool calls: the counter under the usage's
 * `server_tool_use` (`web_search_requests`) → the price data's unit (`web_searches`).
 */
function toolCounters(provider: NonNullable<ReturnType<typeof findProvider>>): Record<string, string> {
  const counters: Record<string, string> = {};
  for (const extractor of provider.extractors ?? [])
    for (const { path, dest } of extractor.mappings)
      if (TOOL_UNITS.includes(dest) && Array.isArray(path) && path.length === 2 && path[0] === 'server_tool_use')
        counters[String(path[1])] = dest;
  return counters;
}

/** A model is kept when it has a token price, or no price at all (a free model). */
function priced(prices: ModelPrice): boolean {
  return Object.keys(prices).length === 0 || prices.input_mtok !== undefined || prices.output_mtok !== undefined;
}

function extract() {
  const providers: Record<string, unknown[]> = {};
  const serverToolCounters: Record<string, Record<string, string>> = {};
  for (const id of PROVIDERS) {
    const provider = findProvider({ providerId: id });
    if (!provider) throw new Error(`genai-prices ${version} has no provider ${id}`);
    const counters = toolCounters(provider);
    if (Object.keys(counters).length) serverToolCounters[id] = counters;
    providers[id] = provider.models
      .map((model) => {
        const prices = Array.isArray(model.prices)
          ? model.prices.map((period) => ({
              ...(period.constraint ? { constraint: period.constraint } : {}),
              prices: keptPrices(period.prices),
            }))
          : keptPrices(model.prices);
        const all = Array.isArray(model.prices) ? model.prices.map((period) => period.prices) : [model.prices];
        return all.every(priced) ? { id: model.id, match: model.match, prices } : undefined;
      })
      .filter(Boolean);
  }
  return {
    source: `genai-prices@${version}`,
    licence: 'MIT, https://github.com/pydantic/genai-prices',
    unit: 'USD per million tokens (*_mtok), per thousand calls (*_kcount)',
    server_tool_counters: serverToolCounters,
    providers,
  };
}

const text = `${JSON.stringify(extract(), null, 1)}\n`;
if (process.argv.includes('--check')) {
  const current = readFileSync(OUT, 'utf8');
  if (current !== text) {
    console.error(
      'lambda/pricing/catalog.json is not what the installed @pydantic/genai-prices gives: run npx tsx scripts/extract-prices.ts',
    );
    process.exit(1);
  }
} else {
  writeFileSync(OUT, text);
  console.log(`wrote lambda/pricing/catalog.json from genai-prices@${version} (${Math.round(text.length / 1024)} KB)`);
}
