import type { Dialect } from '../types';
import { NO_USAGE } from '../usage';
import { chatDialect, chatUsageFrom } from './chat';
import { asObject, asString } from '../../base/json';
import { embeddingsBodySchema, validateWith } from './validation';

/**
 * Embeddings (OpenAI's shape, which Gemini's, Mistral's and Groq's compatible
 * endpoints share): one JSON answer whose `usage.prompt_tokens` is all there is
 * to bill; nothing is generated, so output is always 0. Never streamed.
 */
export const embeddingsDialect: Dialect = {
  ...chatDialect,
  name: 'embeddings',
  validate: (body) => validateWith(embeddingsBodySchema, body, false),
  readResponse(body) {
    const object = asObject(body);
    const usage = asObject(object?.usage);
    return {
      model: asString(object?.model),
      usage: usage && { ...NO_USAGE, inputTokens: chatUsageFrom(usage).inputTokens },
    };
  },
  requestStreamUsage: (_body, raw) => ({ body: raw, added: false }),
  withoutAddedUsage: (event) => event.raw,
  cache: { kind: 'embeddings', allowed: () => true },
};
