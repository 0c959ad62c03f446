import { chatCompletionsProvider } from './chat-completions-provider';

/** OpenAI: stream usage only with stream_options.include_usage. */
export const provB = chatCompletionsProvider({
  id: 'prov-b',
  displayName: 'OpenAI',
  baseUrl: 'https://api.openai.com/v1',
  streamUsage: 'when-asked',
  offers: ['responses', 'embeddings', 'models'],
  exampleModel: 'gpt-4o-mini',
  prices: { catalog: 'openai', litellm: ['openai', 'text-completion-openai'] },
});
