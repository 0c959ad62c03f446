import { chatCompletionsProvider } from './chat-completions-provider';

/** Groq: usage under x_groq.usage in streams, always. */
export const provE = chatCompletionsProvider({
  id: 'prov-e',
  displayName: 'Groq',
  baseUrl: 'https://api.groq.com/openai/v1',
  streamUsage: 'always',
  offers: ['responses', 'embeddings', 'models'],
  exampleModel: 'llama-3.3-70b-versatile',
  prices: { catalog: 'groq', litellm: ['groq'] },
});
