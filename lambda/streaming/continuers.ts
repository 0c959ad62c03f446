import type { DialectName } from '../providers/types';
import { converseContinuer, invokeContinuer } from './bedrock-splice';
import { chatContinuer } from './chat-splice';
import type { Continuer } from './continuation';
import { messagesContinuer } from './messages-splice';

/**
 * The continuer of a stream in this API shape, if its streams can be continued (docs/fallbacks.md,
 * "A stream cut mid-answer"): chat completions and messages over SSE, Converse and InvokeModel over
 * AWS event streams. Responses streams are not: see the docs for why.
 */
export function continuerFor(
  dialect: DialectName,
  format: string,
  body: Record<string, unknown> | undefined,
): Continuer | undefined {
  if (format === 'sse' && dialect === 'chat') return chatContinuer();
  if (format === 'sse' && dialect === 'messages') return messagesContinuer(body);
  if (format === 'eventstream' && dialect === 'converse') return converseContinuer(body);
  if (format === 'eventstream' && dialect === 'invoke') return invokeContinuer(body);
  return undefined;
}
