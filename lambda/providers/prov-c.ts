import { chatCompletionsProvider } from './chat-completions-provider';

/** Google Gemini through its OpenAI-compatible endpoint; usage rides on the last content chunk when asked. */
export const provC = chatCompletionsProvider({
  id: 'prov-c',
  displayName: 'Google Gemini',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
  streamUsage: 'when-asked',
  offers: ['embeddings', 'models'],
  exampleModel: 'gemini-2.5-flash',
  prices: { catalog: 'google', litellm: ['gemini'] },
});
