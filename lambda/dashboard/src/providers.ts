import type { ProviderId } from './types';

export interface ProviderInfo {
  id: ProviderId;
  name: string;
  /** Which official SDK a client uses to reach this provider through the proxy. */
  sdk: 'anthropic' | 'openai';
  /** Path below the proxy base that the SDK's `baseURL` points at. */
  basePath: string;
  /** A model id for the snippets. */
  exampleModel: string;
  /** Chart colour; chosen to stay distinguishable for common colour-vision deficiencies. */
  color: string;
}

/**
 * The browser's copy of the server's provider registry: importing the registry itself would pull the
 * dialect code into the bundle. A test checks that ids, names and example models stay equal.
 */
export const PROVIDERS: readonly ProviderInfo[] = [
  { id: 'prov-a', name: 'Anthropic', sdk: 'anthropic', basePath: '', exampleModel: 'claude-sonnet-4-6', color: '#c2571a' },
  { id: 'prov-b', name: 'OpenAI', sdk: 'openai', basePath: '/prov-b/v1', exampleModel: 'gpt-4o-mini', color: '#1b7f6b' },
  { id: 'prov-c', name: 'Google Gemini', sdk: 'openai', basePath: '/prov-c/v1', exampleModel: 'gemini-2.5-flash', color: '#3566c8' },
  { id: 'prov-d', name: 'Mistral', sdk: 'openai', basePath: '/prov-d/v1', exampleModel: 'mistral-small-latest', color: '#d9a21b' },
  { id: 'prov-e', name: 'Groq', sdk: 'openai', basePath: '/prov-e/v1', exampleModel: 'llama-3.3-70b-versatile', color: '#8a4fb8' },
];

const byId = new Map<string, ProviderInfo>(PROVIDERS.map((p) => [p.id, p]));

/** Unknown ids (a provider added on the server before the dashboard knows it) are shown as they are. */
export function providerName(id: string): string {
  return byId.get(id)?.name ?? id;
}

export function providerColor(id: string): string {
  return byId.get(id)?.color ?? '#6b7280';
}
