/**
 * The one declaration of every provider, as plain data. The runtime (`registry.ts`) builds each
 * provider's routes and wire formats from its entry and its dialect; the dashboard, the management
 * API, the price import and the local server's banner read the same entries. This module imports
 * nothing, so the browser bundle can include it without pulling in server code.
 *
 * Adding a provider is one entry here (docs/providers.md says how).
 */

/**
 * The API style a provider speaks: `messages` is Anthropic's Messages API, `chat` OpenAI's chat
 * completions, `bedrock-runtime` the Amazon Bedrock Runtime API (Converse and InvokeModel, the model in the path).
 */
export type ProviderDialect = 'messages' | 'chat' | 'bedrock-runtime';

/** The endpoints a dialect knows the wire format of; the first one a provider lists is its main endpoint. */
export type DialectEndpoints = {
  messages: 'messages' | 'count_tokens' | 'models';
  chat: 'chat' | 'responses' | 'embeddings' | 'models';
  'bedrock-runtime': 'converse' | 'converse-stream' | 'invoke' | 'invoke-with-response-stream' | 'count-tokens';
};

/**
 * A provider reached through AWS: its base URL names a region (`{region}`), read from `regionEnvVar`
 * or else the function's own region; a stored-mode request without a saved key is signed with
 * SigV4 for `service`, using the runtime's AWS credentials (docs/bedrock.md).
 */
export interface AwsUpstream {
  regionEnvVar: `${string}_REGION`;
  service: string;
}

interface EntryOf<D extends ProviderDialect> {
  /** The path segment below the proxy base, and the `provider` of rows and of `/api/keys/:provider`. */
  id: string;
  displayName: string;
  dialect: D;
  /**
   * Default upstream base URL and the environment variable that replaces it. The proxy appends the
   * endpoint path below it, so a chat-completions base includes the version segment (`…/v1`).
   */
  upstream: { baseUrl: string; envVar: `UPSTREAM_BASE_URL_${string}`; aws?: AwsUpstream };
  /**
   * Where an official SDK's `baseURL` points, below the proxy base. `''` (messages only) puts the
   * provider at the proxy base itself (`/v1/messages`, `/messages`); one provider at most.
   */
  sdkBasePath: string;
  /** The endpoints the provider offers; a path not listed is still forwarded (as `other`), except to Bedrock. */
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

export type CatalogEntry = EntryOf<'messages'> | EntryOf<'chat'> | EntryOf<'bedrock-runtime'>;

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
    upstream: {
      baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
      envVar: 'UPSTREAM_BASE_URL_PROV_C',
    },
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
  {
    // The model is named in the path (`/model/{modelId}/converse`); usage per Converse `usage`, the stream's
    // `metadata` event, the model's own body (Anthropic) or the token-count headers.
    id: 'bedrock',
    displayName: 'Amazon Bedrock',
    dialect: 'bedrock-runtime',
    upstream: {
      baseUrl: 'https://bedrock-runtime.{region}.amazonaws.com',
      envVar: 'UPSTREAM_BASE_URL_BEDROCK',
      aws: { regionEnvVar: 'BEDROCK_REGION', service: 'bedrock' },
    },
    sdkBasePath: '/bedrock',
    endpoints: ['converse', 'converse-stream', 'invoke', 'invoke-with-response-stream', 'count-tokens'],
    streamUsage: 'always',
    exampleModel: 'eu.anthropic.claude-sonnet-4-6',
    prices: { catalog: 'aws', litellm: ['bedrock', 'bedrock_converse'] },
    chartColor: '#5f6b7a',
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
export const DIALECT_SDK = {
  messages: 'anthropic',
  chat: 'openai',
  'bedrock-runtime': 'aws',
} as const satisfies Record<ProviderDialect, string>;
