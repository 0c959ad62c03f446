import { messagesDialect } from './dialects/messages';
import { passthroughDialect } from './dialects/passthrough';
import type { ProviderModule } from './types';

/**
 * Anthropic has no path segment: SDKs append `/v1/…` to the proxy base itself
 * (and `/messages` is accepted without `v1`). `/prov-a/…` reaches any path from the host root.
 */
export const provA = {
  id: 'prov-a',
  displayName: 'Anthropic',
  dialect: messagesDialect,
  upstream: { baseUrl: 'https://api.anthropic.com', envVar: 'UPSTREAM_BASE_URL_PROV_A' },
  endpoints: [
    { kind: 'messages', method: 'POST', path: '/v1/messages', dialect: messagesDialect },
    { kind: 'count_tokens', method: 'POST', path: '/v1/messages/count_tokens', dialect: passthroughDialect(messagesDialect, 'free') },
    { kind: 'models', method: 'GET', path: '/v1/models', dialect: passthroughDialect(messagesDialect, 'free') },
  ],
  mounts: [
    { prefix: '/v1', upstreamPrefix: '/v1' },
    { prefix: '/prov-a', upstreamPrefix: '' },
    { prefix: '', upstreamPrefix: '/v1', endpointsOnly: true },
  ],
  streamUsage: 'always',
  exampleModel: 'claude-sonnet-4-6',
  prices: { catalog: 'anthropic', litellm: ['anthropic'] },
} as const satisfies ProviderModule;
