import type { CatalogEntry } from './catalog';
import { chatDialect } from './dialects/chat';
import { OPENAI_STYLE_ENDPOINTS } from './openai-style-endpoints';
import type { ProviderModule } from './types';

type ChatEntry = Extract<CatalogEntry, { dialect: 'chat' }>;

/**
 * A chat-completions provider from its catalog entry. It follows the conventions of docs/api.md ("Endpoints"):
 * reached at `/prov-x/v1/…` and `/prov-x/…`, both meaning `{base}/…`.
 */
export function chatCompletionsProvider<const Id extends string>(entry: ChatEntry & { id: Id }): ProviderModule<Id> {
  return {
    id: entry.id,
    displayName: entry.displayName,
    dialect: chatDialect,
    upstream: entry.upstream,
    endpoints: entry.endpoints.map((kind) => OPENAI_STYLE_ENDPOINTS[kind]),
    mounts: [
      { prefix: entry.sdkBasePath, upstreamPrefix: '' },
      { prefix: `/${entry.id}`, upstreamPrefix: '' },
    ],
    streamUsage: entry.streamUsage,
    exampleModel: entry.exampleModel,
    prices: entry.prices,
  };
}
