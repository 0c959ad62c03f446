import { chatDialect } from './dialects/chat';
import type { ProviderModule } from './types';

export const provE = {
  id: 'prov-e',
  displayName: 'Groq',
  dialect: chatDialect,
  upstream: { baseUrl: 'https://api.groq.com/openai/v1', envVar: 'UPSTREAM_BASE_URL_PROV_E', path: '/chat/completions' },
  routes: ['/prov-e/v1/chat/completions', '/prov-e/chat/completions'],
  streamUsage: 'always',
  exampleModel: 'llama-3.3-70b-versatile',
} as const satisfies ProviderModule;
