import { chatDialect } from './dialects/chat';
import type { ProviderModule } from './types';

/**
 * A chat-completions provider is its id, name, base URL and stream-usage
 * habit; everything else follows the CONTRACT's conventions: routes with and
 * without `v1`, `{base}/chat/completions` upstream, `UPSTREAM_BASE_URL_PROV_X`.
 */
export function chatCompletionsProvider<const Id extends `prov-${string}`>(spec: {
  id: Id;
  displayName: string;
  baseUrl: string;
  streamUsage: ProviderModule['streamUsage'];
  exampleModel: string;
}): ProviderModule<Id> {
  return {
    id: spec.id,
    displayName: spec.displayName,
    dialect: chatDialect,
    upstream: { baseUrl: spec.baseUrl, envVar: `UPSTREAM_BASE_URL_${spec.id.toUpperCase().replace('-', '_')}`, path: '/chat/completions' },
    routes: [`/${spec.id}/v1/chat/completions`, `/${spec.id}/chat/completions`],
    streamUsage: spec.streamUsage,
    exampleModel: spec.exampleModel,
  };
}
