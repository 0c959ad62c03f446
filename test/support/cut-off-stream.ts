import type OpenAI from 'openai';
import type { FakeUpstream } from '../fakes/fake-upstream';

/**
 * A chat stream the client leaves after about 20 characters of its answer, while the provider
 * still has most of its 200 chunks to send: the usage comes only at the end, so the row is an
 * estimate (`usage_estimated`). `usage` is what the provider would have reported at the end.
 */
export async function leaveStreamEarly(
  upstream: FakeUpstream,
  client: OpenAI,
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
): Promise<void> {
  upstream.next({ chunks: 200, chunkIntervalMs: 50, usage });
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    messages: [{ role: 'user', content: 'p'.repeat(396) }],
  });
  let delivered = '';
  for await (const chunk of stream) {
    delivered += chunk.choices[0]?.delta.content ?? '';
    if (delivered.length >= 20) break; // leaving the loop aborts the request
  }
}
