import { chatDialect } from './dialects/chat';
import { embeddingsDialect } from './dialects/embeddings';
import { passthroughDialect } from './dialects/passthrough';
import { responsesDialect } from './dialects/responses';
import type { DialectEndpoints } from './catalog';
import type { Endpoint } from './types';

/** The endpoints OpenAI-compatible APIs share, below their base URL. A provider lists the ones it offers. */
export const OPENAI_STYLE_ENDPOINTS = {
  chat: { kind: 'chat', method: 'POST', path: '/chat/completions', dialect: chatDialect },
  responses: { kind: 'responses', method: 'POST', path: '/responses', dialect: responsesDialect },
  embeddings: { kind: 'embeddings', method: 'POST', path: '/embeddings', dialect: embeddingsDialect },
  models: { kind: 'models', method: 'GET', path: '/models', dialect: passthroughDialect(chatDialect, 'free') },
} as const satisfies Record<DialectEndpoints['chat'], Endpoint>;
