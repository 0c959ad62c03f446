import { calcPrice, extractUsage, findProvider } from '@pydantic/genai-prices';
import catalog from '../../../lambda/pricing/catalog.json';
import { loadPriceTable } from '../../../lambda/pricing/load-prices';
import { chatDialect } from '../../../lambda/providers/dialects/chat';

/**
 * Audio and image tokens are charged as the price data's own usage extraction and calculator charge
 * them: the proxy's reading of an OpenAI answer (a chat completion with audio, an image generation)
 * gives, in integer nano-dollars, what `calcPrice(extractUsage(…))` gives, for every OpenAI model the
 * data prices audio or image tokens for. Text-only figures stay at the text rates.
 */
const table = loadPriceTable();
const openai = findProvider({ providerId: 'openai' })!;

interface Model {
  id: string;
  prices: Record<string, unknown> | Array<{ prices: Record<string, unknown> }>;
}
const models = (catalog as unknown as { providers: Record<string, Model[]> }).providers.openai!;
const pricing = (key: string) =>
  models
    .filter((model) =>
      (Array.isArray(model.prices) ? model.prices.map((period) => period.prices) : [model.prices]).some(
        (prices) => key in prices,
      ),
    )
    .map((model) => model.id);

const audioAnswer = (model: string, textIn: number, audioIn: number, textOut: number, audioOut: number) => ({
  model,
  usage: {
    prompt_tokens: textIn + audioIn,
    completion_tokens: textOut + audioOut,
    total_tokens: textIn + audioIn + textOut + audioOut,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: audioIn },
    completion_tokens_details: { audio_tokens: audioOut, reasoning_tokens: 0 },
  },
});

const imageAnswer = (textIn: number, imageIn: number, out: number) => ({
  created: 1_764_000_000,
  data: [{ b64_json: 'aGk=' }],
  usage: {
    total_tokens: textIn + imageIn + out,
    input_tokens: textIn + imageIn,
    output_tokens: out,
    input_tokens_details: { text_tokens: textIn, image_tokens: imageIn },
  },
});

const proxyNanos = (body: unknown, model: string) =>
  table.cost(model, chatDialect.readResponse(body).usage!, { provider: 'prov-b' }).nanos;
const packageNanos = (body: unknown, model: string, flavor: 'chat' | 'images') =>
  Math.round(calcPrice(extractUsage(openai, body, flavor).usage, model, { providerId: 'openai' })!.total_price * 1e9);

describe('audio tokens', () => {
  it('gpt-audio: 200 text and 800 audio tokens in, 100 text and 400 audio out: $0.0527, not $0.0075', () => {
    const body = audioAnswer('gpt-audio', 200, 800, 100, 400);
    expect(chatDialect.readResponse(body).usage?.media).toEqual({ audioInput: 800, audioOutput: 400 });
    expect(proxyNanos(body, 'gpt-audio')).toBe(52_700_000);
  });

  it.each(pricing('input_audio_mtok'))('%s: the same cost as genai-prices', (id) => {
    for (const [textIn, audioIn, textOut, audioOut] of [
      [200, 800, 100, 400],
      [0, 1234, 0, 0],
      [5000, 0, 77, 0],
      [1, 99_999, 3, 12_345],
    ]) {
      const body = audioAnswer(id, textIn!, audioIn!, textOut!, audioOut!);
      expect(proxyNanos(body, id)).toBe(packageNanos(body, id, 'chat'));
    }
  });
});

describe('image generation', () => {
  it('gpt-image-1: 10 text and 40 image tokens in, 4,160 out: $0.16685 (input at the input rates)', () => {
    const body = imageAnswer(10, 40, 4160);
    expect(chatDialect.readResponse(body).usage).toEqual({
      inputTokens: 50,
      outputTokens: 4160,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      media: { imageInput: 40 },
    });
    expect(proxyNanos(body, 'gpt-image-1')).toBe(166_850_000);
  });

  it.each(pricing('input_image_mtok'))('%s: the same cost as genai-prices', (id) => {
    for (const [textIn, imageIn, out] of [
      [10, 40, 4160],
      [300, 0, 1056],
      [0, 5000, 272],
    ]) {
      const body = imageAnswer(textIn!, imageIn!, out!);
      expect(proxyNanos(body, id)).toBe(packageNanos(body, id, 'images'));
    }
  });
});
