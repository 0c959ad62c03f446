/** The fakes speak each provider's wire format faithfully: their default answers are the fixtures, byte for byte. */
import { expectedUsage, fixtureText } from '../fixtures/index';
import { callFake, streamPayloads, usageOf, at } from './http-client';
import { startAllFakes, type AllFakes, type ProviderId } from './start-fakes';

let upstreams: AllFakes;
beforeAll(async () => {
  upstreams = await startAllFakes({ seed: 7 });
});
afterAll(() => upstreams.close());
afterEach(() => upstreams.reset());

const PROVIDERS: ProviderId[] = ['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e'];
const fixtureModel = (name: string) => expectedUsage(name).model!;
const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Hi' }],
  max_tokens: 64,
  ...extra,
});

describe('base URLs', () => {
  test('prov-a is the host root; B–E end in the provider’s real base path', () => {
    const { env } = upstreams;
    expect(env.UPSTREAM_BASE_URL_PROV_A).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.UPSTREAM_BASE_URL_PROV_B).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(env.UPSTREAM_BASE_URL_PROV_C).toMatch(/\/v1beta\/openai$/);
    expect(env.UPSTREAM_BASE_URL_PROV_D).toMatch(/\/v1$/);
    expect(env.UPSTREAM_BASE_URL_PROV_E).toMatch(/\/openai\/v1$/);
    expect(upstreams.fakes['prov-a'].endpointPath).toBe('/v1/messages');
    expect(upstreams.fakes['prov-c'].endpointPath).toBe('/v1beta/openai/chat/completions');
  });
});

describe.each(PROVIDERS)('%s', (provider) => {
  const fake = () => upstreams.fakes[provider];

  test('JSON answer is the fixture, byte for byte, when asked for the fixture’s model', async () => {
    const name = `${provider}/text.json`;
    const response = await callFake(fake(), chatBody(fixtureModel(name)));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe(fixtureText(name));
    expect(fake().sentUsage).toMatchObject({
      responses: 1,
      inputTokens: expectedUsage(name).inputTokens,
      outputTokens: expectedUsage(name).outputTokens,
    });
  });

  test('stream with include_usage is the fixture, byte for byte', async () => {
    const name = `${provider}/text.sse`;
    const response = await callFake(
      fake(),
      chatBody(fixtureModel(name), { stream: true, stream_options: { include_usage: true } }),
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await response.text()).toBe(fixtureText(name));
    const { model: _model, status: _status, complete: _complete, ...usage } = expectedUsage(name);
    expect(fake().requests[0]!.response.usage).toEqual({ model: fixtureModel(name), ...usage });
  });

  test('echoes the requested model in every place the provider names it', async () => {
    const model = `${fixtureModel(`${provider}/text.json`)}-2099-01-01`;
    const json = (await (await callFake(fake(), chatBody(model))).json()) as Record<string, unknown>;
    expect(json.model).toBe(model);
    const payloads = streamPayloads(await (await callFake(fake(), chatBody(model, { stream: true }))).text());
    const named = payloads
      .map((payload) => (payload.type === undefined ? payload.model : at(payload, 'message', 'model')))
      .filter(Boolean);
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([model]));
  });

  test('records what it received', async () => {
    await callFake(fake(), chatBody('some-model'), {
      headers: { 'X-Custom-Header': 'Kept', authorization: 'Bearer pk-test' },
    });
    const [request] = fake().requests;
    expect(request).toMatchObject({ method: 'POST', path: fake().endpointPath, json: chatBody('some-model') });
    expect(request!.body).toBe(JSON.stringify(chatBody('some-model')));
    expect(request!.headers['x-custom-header']).toBe('Kept');
    expect(request!.headers.authorization).toBe('Bearer pk-test');
  });

  test('answers 404 in its own error shape on a path the proxy should never call', async () => {
    const response = await fetch(`${fake().origin}/v2/somewhere`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(JSON.stringify(await response.json())).toContain('No route /v2/somewhere');
  });
});

describe('stream usage policy', () => {
  test.each([
    ['prov-b', 'prov-b/text-no-usage.sse'],
    ['prov-c', 'prov-c/text-no-usage.sse'],
  ] as const)('%s sends no usage unless include_usage is asked (as %s)', async (provider, name) => {
    const fake = upstreams.fakes[provider];
    const response = await callFake(fake, chatBody(fixtureModel(name), { stream: true }));
    expect(await response.text()).toBe(fixtureText(name));
    expect(fake.sentUsage).toMatchObject({ responses: 1, inputTokens: 0, outputTokens: 0 });
  });

  test.each(['prov-a', 'prov-d', 'prov-e'] as const)('%s always reports stream usage', async (provider) => {
    const name = `${provider}/text.sse`;
    const response = await callFake(upstreams.fakes[provider], chatBody(fixtureModel(name), { stream: true }));
    expect(await response.text()).toBe(fixtureText(name));
  });

  test('prov-b puts usage in a usage-only chunk; prov-c on the finish chunk; prov-d on the finish chunk; prov-e under x_groq', async () => {
    const stream = async (provider: ProviderId) =>
      streamPayloads(
        await (
          await callFake(
            upstreams.fakes[provider],
            chatBody('m', { stream: true, stream_options: { include_usage: true } }),
          )
        ).text(),
      );
    const last = (payloads: Record<string, unknown>[]) => payloads[payloads.length - 1]!;
    expect(last(await stream('prov-b'))).toMatchObject({ choices: [], usage: { prompt_tokens: 23 } });
    expect(last(await stream('prov-c'))).toMatchObject({
      choices: [{ finish_reason: 'stop' }],
      usage: { prompt_tokens: 9 },
    });
    expect(last(await stream('prov-d'))).toMatchObject({
      choices: [{ finish_reason: 'stop' }],
      usage: { prompt_tokens: 15 },
    });
    expect(last(await stream('prov-e'))).toMatchObject({ x_groq: { usage: { prompt_tokens: 38 } } });
  });
});

describe('scripted usage and content', () => {
  test('explicit usage lands in the provider’s own fields (prov-a: input excludes cache; delta is cumulative)', async () => {
    const fake = upstreams.fakes['prov-a'];
    fake.next({
      usage: { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 600, cacheWriteTokens: 300 },
      fixture: 'prov-a/prompt-cache.sse',
    });
    const payloads = streamPayloads(await (await callFake(fake, chatBody('claude-opus-4-6', { stream: true }))).text());
    const delta = payloads.find((payload) => payload.type === 'message_delta')!;
    expect(delta.usage).toEqual({
      input_tokens: 100,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 600,
      output_tokens: 50,
    });
    expect(usageOf(payloads)).toEqual({
      inputTokens: 1000,
      outputTokens: 50,
      cacheReadTokens: 600,
      cacheWriteTokens: 300,
    });
    expect(fake.sentUsage).toMatchObject({
      inputTokens: 1000,
      outputTokens: 50,
      cacheReadTokens: 600,
      cacheWriteTokens: 300,
    });
  });

  test('usage a shape cannot carry is served, and counted, as 0', async () => {
    const fake = upstreams.fakes['prov-d'];
    fake.next({ usage: { inputTokens: 70, outputTokens: 5, cacheReadTokens: 20, cacheWriteTokens: 10 } });
    const json = await (await callFake(fake, chatBody('mistral-small-latest'))).json();
    expect(at(json, 'usage')).toEqual({ prompt_tokens: 70, total_tokens: 75, completion_tokens: 5 });
    expect(fake.sentUsage).toMatchObject({ inputTokens: 70, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  test('random usage: the totals equal the sum of what the bodies said', async () => {
    for (const fake of Object.values(upstreams.fakes)) fake.always({ usage: 'random' });
    let seen = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const provider of PROVIDERS) {
      for (const stream of [false, true, true]) {
        const response = await callFake(
          upstreams.fakes[provider],
          chatBody('m', { stream, stream_options: { include_usage: true } }),
        );
        const text = await response.text();
        const payloads = stream ? streamPayloads(text) : [JSON.parse(text) as Record<string, unknown>];
        const usage = usageOf(
          stream
            ? payloads
            : payloads.map((body) => (body.type === 'message' ? { type: 'message_start', message: body } : body)),
        );
        seen = {
          inputTokens: seen.inputTokens + usage.inputTokens,
          outputTokens: seen.outputTokens + usage.outputTokens,
          cacheReadTokens: seen.cacheReadTokens + usage.cacheReadTokens,
          cacheWriteTokens: seen.cacheWriteTokens + usage.cacheWriteTokens,
        };
      }
    }
    expect(upstreams.sentUsage()).toEqual({ responses: 15, ...seen });
    expect(seen.cacheWriteTokens).toBeGreaterThan(0);
  });

  test('chunks sets the number of content deltas', async () => {
    upstreams.fakes['prov-a'].next({ chunks: 25 });
    const payloads = streamPayloads(
      await (await callFake(upstreams.fakes['prov-a'], chatBody('m', { stream: true }))).text(),
    );
    expect(payloads.filter((payload) => payload.type === 'content_block_delta')).toHaveLength(25);
    expect(payloads[payloads.length - 1]!.type).toBe('message_stop');
  });

  test('fixture serves a named fixture with its own status', async () => {
    upstreams.fakes['prov-a'].next({ fixture: 'prov-a/error-overloaded.json' });
    const response = await callFake(upstreams.fakes['prov-a'], chatBody('m', { stream: true }));
    expect(response.status).toBe(529);
    expect(await response.text()).toBe(fixtureText('prov-a/error-overloaded.json'));
  });
});
