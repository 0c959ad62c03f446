import { messagesDialect } from './dialects/messages';
import type { ProviderModule } from './types';

export const provA = {
  id: 'prov-a',
  displayName: 'Anthropic',
  dialect: messagesDialect,
  upstream: { baseUrl: 'https://api.anthropic.com', envVar: 'UPSTREAM_BASE_URL_PROV_A', path: '/v1/messages' },
  routes: ['/v1/messages', '/messages'],
  streamUsage: 'always',
  exampleModel: 'claude-sonnet-4-6',
} as const satisfies ProviderModule;
