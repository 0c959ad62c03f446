/** The official SDKs, pointed straight at the fakes, read them as they read the real providers. */
import Anthropic, { OverloadedError } from '@anthropic-ai/sdk';
import OpenAI, { AuthenticationError, RateLimitError } from 'openai';
import { startAllFakes, type AllFakes } from './start-fakes';

let upstreams: AllFakes;
beforeAll(async () => {
  upstreams = await startAllFakes();
});
afterAll(() => upstreams.close());
afterEach(() => upstreams.reset());

const messages = [{ role: 'user' as const, content: 'Hello' }];
const anthropic = () =>
  new Anthropic({ apiKey: 'pk-test-a', baseURL: upstreams.env.UPSTREAM_BASE_URL_PROV_A, maxRetries: 0 });
const chat = (env: keyof AllFakes['env']) =>
  new OpenAI({ apiKey: 'pk-test-chat', baseURL: upstreams.env[env], maxRetries: 0 });

test('Anthropic SDK: JSON and streamed message, usage included', async () => {
  const message = await anthropic().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages });
  expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('counts every token') });
  expect(message.usage.input_tokens).toBe(19);

  const stream = anthropic().messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 64, messages });
  const final = await stream.finalMessage();
  expect(final.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('counts every token') });
  expect(final.usage).toMatchObject({ input_tokens: 19, output_tokens: 24 });
  // This SDK generation sends the key as a bearer token, not in x-api-key: the proxy must accept both.
  expect(upstreams.fakes['prov-a'].requests[1]!.headers.authorization).toBe('Bearer pk-test-a');
});

test('Anthropic SDK: the prompt-cache stream ends with the cumulative usage', async () => {
  upstreams.fakes['prov-a'].next({ fixture: 'prov-a/prompt-cache.sse' });
  const final = await anthropic()
    .messages.stream({ model: 'claude-opus-4-6', max_tokens: 64, messages })
    .finalMessage();
  expect(final.usage).toMatchObject({
    input_tokens: 9,
    cache_creation_input_tokens: 3210,
    cache_read_input_tokens: 6120,
    output_tokens: 245,
  });
});

test('Anthropic SDK raises its typed error for a 529', async () => {
  upstreams.fakes['prov-a'].next({ status: 529 });
  await expect(
    anthropic().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 8, messages }),
  ).rejects.toBeInstanceOf(OverloadedError);
});

test.each([
  'UPSTREAM_BASE_URL_PROV_B',
  'UPSTREAM_BASE_URL_PROV_C',
  'UPSTREAM_BASE_URL_PROV_D',
  'UPSTREAM_BASE_URL_PROV_E',
] as const)('OpenAI SDK against %s: JSON, and a stream whose chunks carry usage', async (env) => {
  const completion = await chat(env).chat.completions.create({ model: 'some-model', messages });
  expect(completion.model).toBe('some-model');
  expect(completion.choices[0]!.message.content).toBeTruthy();
  expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);

  const stream = await chat(env).chat.completions.create({
    model: 'some-model',
    messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let promptTokens = 0;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    const groq = (chunk as { x_groq?: { usage?: { prompt_tokens: number } } }).x_groq;
    promptTokens = chunk.usage?.prompt_tokens ?? groq?.usage?.prompt_tokens ?? promptTokens;
  }
  expect(text.length).toBeGreaterThan(0);
  expect(promptTokens).toBeGreaterThan(0);
});

test('OpenAI SDK raises its typed errors for the fakes’ native error bodies', async () => {
  upstreams.fakes['prov-b'].next({ status: 401 });
  await expect(
    chat('UPSTREAM_BASE_URL_PROV_B').chat.completions.create({ model: 'm', messages }),
  ).rejects.toBeInstanceOf(AuthenticationError);
  upstreams.fakes['prov-e'].next({ status: 429, headers: { 'retry-after': '2' } });
  await expect(
    chat('UPSTREAM_BASE_URL_PROV_E').chat.completions.create({ model: 'm', messages }),
  ).rejects.toBeInstanceOf(RateLimitError);
  upstreams.fakes['prov-c'].next({ status: 429, errorMessage: 'Quota exceeded' });
  await expect(
    chat('UPSTREAM_BASE_URL_PROV_C').chat.completions.create({ model: 'm', messages }),
  ).rejects.toBeInstanceOf(RateLimitError);
});
