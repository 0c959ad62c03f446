import { chatDialect } from './dialects/chat';
import { OPENAI_STYLE_ENDPOINTS, type OpenAiStyleEndpoint } from './openai-style-endpoints';
import type { ProviderModule } from './types';

/**
 * A chat-completions provider is its id, name, base URL, stream-usage habit and
 * the endpoints it offers; everything else follows the conventions of the
 * README: reached at `/prov-x/v1/…` and `/prov-x/…`, both meaning `{base}/…`,
 * base overridable with `UPSTREAM_BASE_URL_PROV_X`.
 */
export function chatCompletionsProvider<const Id extends `prov-${string}`>(spec: {
  id: Id;
  displayName: string;
  baseUrl: string;
  streamUsage: ProviderModule['streamUsage'];
  exampleModel: string;
  /** Beyond chat completions; a path not listed here is still forwarded (as `other`), and a provider without it answers its own 404. */
  offers: readonly Exclude<OpenAiStyleEndpoint, 'chat'>[];
  prices: ProviderModule['prices'];
}): ProviderModule<Id> {
  return {
    id: spec.id,
    displayName: spec.displayName,
    dialect: chatDialect,
    upstream: { baseUrl: spec.baseUrl, envVar: `UPSTREAM_BASE_URL_${spec.id.toUpperCase().replace('-', '_')}` },
    endpoints: [OPENAI_STYLE_ENDPOINTS.chat, ...spec.offers.map((name) => OPENAI_STYLE_ENDPOINTS[name])],
    mounts: [
      { prefix: `/${spec.id}/v1`, upstreamPrefix: '' },
      { prefix: `/${spec.id}`, upstreamPrefix: '' },
    ],
    streamUsage: spec.streamUsage,
    exampleModel: spec.exampleModel,
    prices: spec.prices,
  };
}
