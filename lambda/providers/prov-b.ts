import { chatDialect } from './dialects/chat';
import type { ProviderModule } from './types';

export const provB = {
  id: 'prov-b',
  displayName: 'OpenAI',
  dialect: chatDialect,
  upstream: { baseUrl: 'https://api.openai.com/v1', envVar: 'UPSTREAM_BASE_URL_PROV_B', path: '/chat/completions' },
  routes: ['/prov-b/v1/chat/completions', '/prov-b/chat/completions'],
  streamUsage: 'when-asked',
  exampleModel: 'gpt-4o-mini',
} as const satisfies ProviderModule;
