import { chatDialect } from './dialects/chat';
import type { ProviderModule } from './types';

export const provC = {
  id: 'prov-c',
  displayName: 'Google Gemini',
  dialect: chatDialect,
  upstream: { baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai', envVar: 'UPSTREAM_BASE_URL_PROV_C', path: '/chat/completions' },
  routes: ['/prov-c/v1/chat/completions', '/prov-c/chat/completions'],
  streamUsage: 'when-asked',
  exampleModel: 'gemini-2.5-flash',
} as const satisfies ProviderModule;
