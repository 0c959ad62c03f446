import { deliveredChars } from '../../../lambda/providers/dialects/delivered-text';
import { CHARS_PER_TOKEN, estimateCutOff, requestTextChars } from '../../../lambda/usage/estimate';

describe('the estimate for a cut-off stream', () => {
  it('counts every string of the request but the model id', () => {
    const body = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'abcd' }] }],
      tools: [{ name: 'go', description: 'xy' }],
      stream: true,
    };
    expect(requestTextChars(body)).toBe('user'.length + 'text'.length + 4 + 'go'.length + 2);
    expect(requestTextChars(undefined)).toBe(0);
  });

  it('counts the delivered text of chat and messages deltas, not their envelopes', () => {
    expect(deliveredChars('{"choices":[{"delta":{"role":"assistant","content":"Hello"}}]}')).toBe(5);
    expect(deliveredChars('{"type":"content_block_delta","delta":{"type":"text_delta","text":"a\\"b"}}')).toBe(4);
    expect(deliveredChars('{"delta":{"type":"input_json_delta","partial_json":"{\\"q\\": 1}"}}')).toBe(10);
    expect(deliveredChars('{"usage":{"prompt_tokens":3}}')).toBe(0);
  });

  it('keeps what the provider reported, estimates what it did not, and says so', () => {
    const cut = { requestChars: 400, deliveredChars: 4_001 };
    expect(CHARS_PER_TOKEN).toBe(4);
    expect(estimateCutOff(undefined, cut)).toEqual({
      usage: { inputTokens: 100, outputTokens: 1_001, cacheReadTokens: 0, cacheWriteTokens: 0 },
      estimated: true,
    });
    const opening = { inputTokens: 50, outputTokens: 1, cacheReadTokens: 40, cacheWriteTokens: 0 };
    expect(estimateCutOff(opening, cut)).toEqual({
      usage: { inputTokens: 50, outputTokens: 1_001, cacheReadTokens: 40, cacheWriteTokens: 0 },
      estimated: true,
    });
    const reported = { inputTokens: 50, outputTokens: 2_000, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(estimateCutOff(reported, cut)).toEqual({ usage: reported, estimated: false });
  });
});
