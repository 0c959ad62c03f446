/**
 * The one declaration of every provider, as plain data. The runtime (`registry.ts`) builds each
 * provider's routes and wire formats from its entry and its dialect; the dashboard, the management
 * API, the price import and the local server's banner read the same entries. This module imports
 * nothing, so the browser bundle can include it without pulling in server code.
 *
 * Adding a provider is one entry here (docs/providers.md says how).
 */

/** The API style a provider speaks: `messages` is Anthropic's Messages API, `chat` OpenAI's chat completions. */
export type ProviderDialect = 'messages' | 'chat';

/** The endpoints a dialect knows the wire format of; the first one a provider lists is its main endpoint. */
export type DialectEndpoints = {
  messages: 'messages' | 'count_tokens' | 'models';
  chat: 'chat' | 'responses' | 'embeddings' | 'models';
};

interface EntryOf<D extends ProviderDialect> {
  id: `prov-${string}`;
  displayName: string;
  dialect: D;
  /**
   * Default upstream base URL and the environment variable that replaces it. The proxy appends the
   * endpoint path below it, so a chat-completions base includes the version segment (`…/v1`).
   */
  upstream: { baseUrl: string; envVar: `UPSTREAM_BASE_URL_${string}` };
  /**
   * Where an official SDK's `baseURL` points, below the proxy base. `''` (messages only) puts the
   * provider at the proxy base itself (`/v1/messages`, `/messages`); one provider at most.
   */
  sdkBasePath: string;
  /** The endpoints the provider offers; a path not listed is still forwarded (as `other`). */
  endpoints: readonly [DialectEndpoints[D], ...DialectEndpoints[D][]];
  /**
   * `always`: the provider reports usage in every stream.
   * `when-asked`: only with `stream_options.include_usage`; the proxy asks, and hides the extra event from a client that didn't.
   */
  streamUsage: 'always' | 'when-asked';
  /** The model a first request in the dashboard's snippets uses. */
  exampleModel: string;
  /**
   * Where this provider's prices are found: its id in the built-in price data
   * (@pydantic/genai-prices), and the `litellm_provider` names of its own entries
   * in a LiteLLM price file (other platforms' rows for the same models are ignored).
   */
  prices: { catalog: string; litellm: readonly string[] };
  /** The dashboard's chart colour; the set stays distinguishable for common colour-vision deficiencies. */
  chartColor: `#${string}`;
}

export type CatalogEntry = EntryOf<'messages'> | EntryOf<'chat'>;

export const PROVIDER_CATALOG = [
  {
    // Anthropic's SDK appends `/v1/messages` to its base URL itself, so this provider sits at the proxy base.
    id: 'prov-a',
    displayName: 'Anthropic',
    dialect: 'messages',
    upstream: { baseUrl: 'https://api.anthropic.com', envVar: 'UPSTREAM_BASE_URL_PROV_A' },
    sdkBasePath: '',
    endpoints: ['messages', 'count_tokens', 'models'],
    streamUsage: 'always',
    exampleModel: 'claude-sonnet-4-6',
    prices: { catalog: 'anthropic', litellm: ['anthropic'] },
    chartColor: '#c2571a',
  },
  {
    id: 'prov-b',
    displayName: 'OpenAI',
    dialect: 'chat',
    upstream: { baseUrl: 'https://api.openai.com/v1', envVar: 'UPSTREAM_BASE_URL_PROV_B' },
    sdkBasePath: '/prov-b/v1',
    endpoints: ['chat', 'responses', 'embeddings', 'models'],
    streamUsage: 'when-asked',
    exampleModel: 'gpt-4o-mini',
    prices: { catalog: 'openai', litellm: ['openai', 'text-completion-openai'] },
    chartColor: '#1b7f6b',
  },
  {
    // Gemini's OpenAI-compatible endpoint: usage rides on the last content chunk, when asked.
    id: 'prov-c',
    displayName: 'Google Gemini',
    dialect: 'chat',
    upstream: { baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai', envVar: 'UPSTREAM_BASE_URL_PROV_C' },
    sdkBasePath: '/prov-c/v1',
    endpoints: ['chat', 'embeddings', 'models'],
    streamUsage: 'when-asked',
    exampleModel: 'gemini-2.5-flash',
    prices: { catalog: 'google', litellm: ['gemini'] },
    chartColor: '#3566c8',
  },
  {
    // Usage on the chunk that carries finish_reason.
    id: 'prov-d',
    displayName: 'Mistral',
    dialect: 'chat',
    upstream: { baseUrl: 'https://api.mistral.ai/v1', envVar: 'UPSTREAM_BASE_URL_PROV_D' },
    sdkBasePath: '/prov-d/v1',
    endpoints: ['chat', 'embeddings', 'models'],
    streamUsage: 'always',
    exampleModel: 'mistral-small-latest',
    prices: { catalog: 'mistral', litellm: ['mistral'] },
    chartColor: '#d9a21b',
  },
  {
    // Usage under x_groq.usage in streams (the chat dialect reads both places).
    id: 'prov-e',
    displayName: 'Groq',
    dialect: 'chat',
    upstream: { baseUrl: 'https://api.groq.com/openai/v1', envVar: 'UPSTREAM_BASE_URL_PROV_E' },
    sdkBasePath: '/prov-e/v1',
    endpoints: ['chat', 'responses', 'embeddings', 'models'],
    streamUsage: 'always',
    exampleModel: 'llama-3.3-70b-versatile',
    prices: { catalog: 'groq', litellm: ['groq'] },
    chartColor: '#8a4fb8',
  },
] as const satisfies readonly CatalogEntry[];

export type ProviderId = (typeof PROVIDER_CATALOG)[number]['id'];

export const PROVIDER_IDS: readonly ProviderId[] = PROVIDER_CATALOG.map((entry) => entry.id);

/** An entry of this catalog (its id one of the declared ones). */
export type ProviderEntry = CatalogEntry & { id: ProviderId };

const byId = new Map<string, ProviderEntry>(PROVIDER_CATALOG.map((entry) => [entry.id, entry]));

export function catalogEntry(id: string): ProviderEntry | undefined {
  return byId.get(id);
}

/** The official SDK that speaks each dialect, for snippets and help texts. */
export const DIALECT_SDK = { messages: 'anthropic', chat: 'openai' } as const satisfies Record<ProviderDialect, string>;
