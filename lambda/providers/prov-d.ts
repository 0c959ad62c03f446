import { chatDialect } from './dialects/chat';
import type { ProviderModule } from './types';

export const provD = {
  id: 'prov-d',
  displayName: 'Mistral',
  dialect: chatDialect,
  upstream: { baseUrl: 'https://api.mistral.ai/v1', envVar: 'UPSTREAM_BASE_URL_PROV_D', path: '/chat/completions' },
  routes: ['/prov-d/v1/chat/completions', '/prov-d/chat/completions'],
  streamUsage: 'always',
  exampleModel: 'mistral-small-latest',
} as const satisfies ProviderModule;
