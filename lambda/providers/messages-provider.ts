import type { CatalogEntry } from './catalog';
import { messagesDialect } from './dialects/messages';
import { passthroughDialect } from './dialects/passthrough';
import type { Endpoint, Mount, ProviderModule } from './types';

type MessagesEntry = Extract<CatalogEntry, { dialect: 'messages' }>;

/** The endpoints of the Messages API style, below the provider's base URL (which has no version segment). */
const MESSAGES_STYLE_ENDPOINTS = {
  messages: { kind: 'messages', method: 'POST', path: '/v1/messages', dialect: messagesDialect },
  count_tokens: {
    kind: 'count_tokens',
    method: 'POST',
    path: '/v1/messages/count_tokens',
    dialect: passthroughDialect(messagesDialect, 'free'),
  },
  models: { kind: 'models', method: 'GET', path: '/v1/models', dialect: passthroughDialect(messagesDialect, 'free') },
} as const satisfies Record<MessagesEntry['endpoints'][number], Endpoint>;

/**
 * A Messages-API provider from its catalog entry. `/prov-x/…` reaches any path from the host root.
 * At the proxy base (`sdkBasePath: ''`) it also owns `/v1/…`, since the SDK appends `/v1/…` to its
 * base URL itself, and `/messages` without `v1` reaches its endpoints.
 */
export function messagesProvider<const Id extends string>(entry: MessagesEntry & { id: Id }): ProviderModule<Id> {
  const own: Mount = { prefix: `/${entry.id}`, upstreamPrefix: '' };
  const atProxyBase: Mount[] = [
    { prefix: '/v1', upstreamPrefix: '/v1' },
    own,
    { prefix: '', upstreamPrefix: '/v1', endpointsOnly: true },
  ];
  return {
    id: entry.id,
    displayName: entry.displayName,
    dialect: messagesDialect,
    upstream: entry.upstream,
    endpoints: entry.endpoints.map((kind) => MESSAGES_STYLE_ENDPOINTS[kind]),
    mounts: entry.sdkBasePath === '' ? atProxyBase : [own],
    streamUsage: entry.streamUsage,
    exampleModel: entry.exampleModel,
    prices: entry.prices,
  };
}
