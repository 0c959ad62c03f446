import { chatCompletionsProvider } from './chat-completions-provider';

/** Mistral: usage on the chunk that carries finish_reason, always. */
export const provD = chatCompletionsProvider({
  id: 'prov-d',
  displayName: 'Mistral',
  baseUrl: 'https://api.mistral.ai/v1',
  streamUsage: 'always',
  offers: ['embeddings', 'models'],
  exampleModel: 'mistral-small-latest',
  prices: { catalog: 'mistral', litellm: ['mistral'] },
});
