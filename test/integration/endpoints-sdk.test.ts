/**
 * The endpoints beyond chat, through the official SDKs as users call them:
 * Responses API (JSON, stream, and the `responses.stream()` helper), embeddings,
 * model lists, token counting and the beta messages call with its query string.
 * Each against a fake provider serving the fixtures of `test/fixtures/endpoints`,
 * each with its exact row. The response cache on the Responses API: endpoints-responses-cache.test.ts.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { expectedEndpointUsage } from '../fixtures/index';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { RESPONSES_COST, RESPONSES_TEXT, responsesRow, sdkEndpoints } from './support/sdk-endpoints';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const { requester, rowOf, openai, anthropic } = sdkEndpoints(() => proxy);

describe('Responses API through the openai SDK', () => {
  it('responses.create (JSON): the answer as sent, the row exact to the token and to 1e-9 USD', async () => {
    const user = requester('resp-json');
    const response = await openai(user).responses.create({
      model: 'gpt-4.1-2025-04-14',
      input: 'Tell me a three sentence bedtime story about a unicorn.',
    });
    expect(response.output_text).toBe(RESPONSES_TEXT);
    expect(response.usage).toMatchObject({ input_tokens: 2036, output_tokens: 187 });
    const row = await rowOf(user);
    expect(row).toMatchObject(responsesRow(user, false));
    expect(row.cost_usd).toBeCloseTo(RESPONSES_COST, 9);
    expect(row.cost_nanos).toBe(Math.round(RESPONSES_COST * 1e9));
  });

  it('responses.create (stream: true): every event through, usage from response.completed', async () => {
    const user = requester('resp-sse');
    const stream = await openai(user).responses.create({
      model: 'gpt-4.1-2025-04-14',
      input: 'Tell me a story.',
      stream: true,
    });
    let text = '';
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(text).toBe(RESPONSES_TEXT);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const row = await rowOf(user);
    expect(row).toMatchObject(responsesRow(user, true));
    expect(row.cost_usd).toBeCloseTo(RESPONSES_COST, 9);
  });

  it('the responses.stream() helper assembles the final response', async () => {
    const user = requester('resp-helper');
    const runner = openai(user).responses.stream({ model: 'gpt-4.1-2025-04-14', input: 'Tell me a story.' });
    const deltas: string[] = [];
    runner.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await runner.finalResponse();
    expect(final.output_text).toBe(RESPONSES_TEXT);
    expect(deltas.join('')).toBe(RESPONSES_TEXT);
    expect(await rowOf(user)).toMatchObject(responsesRow(user, true));
  });

  // OpenAI's own rules: `input` is optional, and `model` may come from a stored prompt.
  it.each([
    ['a stored prompt, no model and no input', { prompt: { id: 'pmpt_abc123', variables: { city: 'Paris' } } }],
    ['a conversation only', { model: 'gpt-4.1-2025-04-14', conversation: 'conv_abc123' }],
    ['a previous_response_id only', { model: 'gpt-4.1-2025-04-14', previous_response_id: 'resp_abc123' }],
  ])('accepts %s: forwarded as sent, the row exact', async (_what, params) => {
    const user = requester('resp-shapes');
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    const response = await openai(user).responses.create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(response.output_text).toBe(RESPONSES_TEXT);
    expect(fake.requests.length).toBe(before + 1);
    expect(fake.requests[before]!.json).toEqual(params);
    expect(await rowOf(user)).toMatchObject(responsesRow(user, false));
  });

  it('pass-through mode: the client’s own key goes upstream, the row is the same', async () => {
    const user = requester('resp-own-key');
    const own = `sk-own-${randomBytes(12).toString('hex')}`;
    proxy.secrets.add(own);
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    await openai(user, 'prov-b', { 'x-proxy-token': proxy.account.token }, own).responses.create({
      model: 'gpt-4.1-2025-04-14',
      input: 'hi',
    });
    expect(fake.requests[before]!.headers.authorization).toBe(`Bearer ${own}`);
    expect(fake.requests[before]!.path).toBe('/v1/responses');
    expect(await rowOf(user)).toMatchObject(responsesRow(user, false, 'pass-through'));
  });

  it('previous_response_id and store pass through untouched', async () => {
    const user = requester('resp-followup');
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    await openai(user).responses.create({
      model: 'gpt-4.1-2025-04-14',
      input: 'And then?',
      previous_response_id: 'resp_abc',
      store: false,
    });
    expect(fake.requests[before]!.json).toMatchObject({ previous_response_id: 'resp_abc', store: false });
  });

  it('a model (or a stored prompt) is required and fields are typed: a 400 in OpenAI’s shape, raised by the SDK as BadRequestError', async () => {
    const client = openai(requester('resp-bad'));
    const noModel = await client.responses.create({ input: 'hi' } as never).catch((error: unknown) => error);
    expect(noModel).toBeInstanceOf(OpenAI.BadRequestError);
    expect((noModel as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'model',
    });
    const wrong = await client.responses
      .create({ model: 'gpt-4.1', input: 42 } as never)
      .catch((error: unknown) => error);
    expect((wrong as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'input',
    });
    const badPrompt = await client.responses
      .create({ prompt: { version: '2' } } as never)
      .catch((error: unknown) => error);
    expect((badPrompt as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'prompt' });
  });

  it('a provider without the Responses API answers its own 404, passed through; the row says kind other', async () => {
    const user = requester('resp-mistral');
    const error = await openai(user, 'prov-d')
      .responses.create({ model: 'mistral-small-latest', input: 'hi' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    // Mistral's own error body (`{"object":"error","message":…}`): its message lands in the row.
    expect(await rowOf(user)).toMatchObject({
      provider: 'prov-d',
      kind: 'other',
      status_code: 404,
      input_tokens: 0,
      cost_usd: 0,
      error: 'No route /v1/responses',
    });
  });

  it('Groq offers it too (prov-e)', async () => {
    const user = requester('resp-groq');
    const response = await openai(user, 'prov-e').responses.create({ model: 'openai/gpt-oss-20b', input: 'hi' });
    expect(response.output_text).toBe(RESPONSES_TEXT);
    const row = await rowOf(user);
    expect(row).toMatchObject({
      provider: 'prov-e',
      kind: 'responses',
      model: 'openai/gpt-oss-20b',
      input_tokens: 2036,
      output_tokens: 187,
      cache_read_tokens: 1920,
      priced: true,
    });
    // Groq's gpt-oss-20b list prices (USD per million): input 0.075, cached input 0.0375, output 0.3.
    expect(row.cost_usd).toBeCloseTo(((2036 - 1920) * 0.075 + 1920 * 0.0375 + 187 * 0.3) / 1e6, 9);
  });
});

describe('embeddings through the openai SDK', () => {
  const cases = [
    ['prov-b', 'text-embedding-3-small', 'openai-embeddings.json', 0.02],
    ['prov-c', 'gemini-embedding-001', 'openai-embeddings.json', 0.15],
    ['prov-d', 'mistral-embed', 'mistral-embeddings.json', 0.1],
  ] as const;
  it.each(cases)(
    '%s %s: input tokens = usage.prompt_tokens, output 0, the embedding model’s price',
    async (provider, model, fixture, usdPerMillion) => {
      const user = requester(`emb-${provider}`);
      const result = await openai(user, provider).embeddings.create({
        model,
        input: ['The food was delicious', 'and the waiter…'],
        encoding_format: 'float',
      });
      expect(result.data[0]!.embedding.length).toBeGreaterThan(0);
      const { inputTokens } = expectedEndpointUsage(fixture);
      const row = await rowOf(user);
      expect(row).toMatchObject({
        provider,
        kind: 'embeddings',
        model,
        input_tokens: inputTokens,
        output_tokens: 0,
        status_code: 200,
        priced: true,
        stream: false,
      });
      expect(row.cost_usd).toBeCloseTo((inputTokens * usdPerMillion) / 1e6, 9);
    },
  );

  it('with x-proxy-cache an identical embeddings request is a hit: 0 tokens, saved_usd = the original cost', async () => {
    const input = `embed me ${randomBytes(6).toString('hex')}`;
    const first = requester('emb-cache-1');
    const miss = await openai(first, 'prov-b', { 'x-proxy-cache': 'true' })
      .embeddings.create({ model: 'text-embedding-3-small', input })
      .withResponse();
    expect(miss.response.headers.get('x-proxy-cache')).toBe('MISS');
    await rowOf(first);
    const second = requester('emb-cache-2');
    const hit = await openai(second, 'prov-b', { 'x-proxy-cache': 'true' })
      .embeddings.create({ model: 'text-embedding-3-small', input })
      .withResponse();
    expect(hit.response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(hit.data.data[0]!.embedding).toEqual(miss.data.data[0]!.embedding);
    const row = await rowOf(second);
    expect(row).toMatchObject({ kind: 'embeddings', cached: true, input_tokens: 0, cost_usd: 0 });
    expect(row.saved_usd).toBeCloseTo((8 * 0.02) / 1e6, 9);
  });

  it('input is required', async () => {
    const error = await openai(requester('emb-bad'))
      .embeddings.create({ model: 'text-embedding-3-small' } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'input' });
  });
});

describe('model lists and token counting', () => {
  it('openai models.list: the provider’s list, a free row (0 tokens, cost 0, priced)', async () => {
    const user = requester('models-b');
    const ids: string[] = [];
    for await (const model of openai(user).models.list()) ids.push(model.id);
    expect(ids).toEqual(['gpt-4.1-2025-04-14', 'text-embedding-3-small', 'gpt-4o-mini']);
    expect(await rowOf(user)).toMatchObject({
      provider: 'prov-b',
      kind: 'models',
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      cost_nanos: 0,
      priced: true,
      status_code: 200,
      mode: 'stored',
    });
    expect(proxy.fakes.fakes['prov-b'].requests.at(-1)!.headers.authorization).toBe(
      `Bearer ${proxy.storedKeys['prov-b']}`,
    );
  });

  it('anthropic models.list', async () => {
    const user = requester('models-a');
    const page = await anthropic(user).models.list();
    expect(page.data.map((m) => m.id)).toEqual(['claude-sonnet-4-6', 'claude-haiku-4-5-20251001']);
    expect(await rowOf(user)).toMatchObject({
      provider: 'prov-a',
      kind: 'models',
      input_tokens: 0,
      cost_usd: 0,
      priced: true,
      status_code: 200,
    });
    expect(proxy.fakes.fakes['prov-a'].requests.at(-1)!.headers['x-api-key']).toBe(proxy.storedKeys['prov-a']);
  });

  it('anthropic messages.countTokens: the count as the provider gives it, a free row with the request’s model', async () => {
    const user = requester('count');
    const count = await anthropic(user).messages.countTokens({
      model: 'claude-sonnet-4-6',
      messages: [{ role: 'user', content: 'Hello, world' }],
    });
    expect(count.input_tokens).toBe(2095);
    expect(await rowOf(user)).toMatchObject({
      provider: 'prov-a',
      kind: 'count_tokens',
      model: 'claude-sonnet-4-6',
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      priced: true,
      status_code: 200,
    });
  });
});

describe('beta messages and query strings', () => {
  // Claude Code sends `POST /v1/messages?beta=true`; this SDK version sends the query only when asked, as here.
  it('anthropic beta.messages.create: ?beta=true reaches the provider exactly, with the beta header; an exact messages row', async () => {
    const user = requester('beta');
    const fake = proxy.fakes.fakes['prov-a'];
    const before = fake.requests.length;
    const message = await anthropic(user).beta.messages.create(
      {
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
        betas: ['interleaved-thinking-2025-05-14'],
      },
      { query: { beta: 'true' } },
    );
    expect(message.content.length).toBeGreaterThan(0);
    expect(fake.requests[before]!.path).toBe('/v1/messages?beta=true');
    expect(fake.requests[before]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    const sent = fake.requests[before]!.response.usage!;
    const row = await rowOf(user);
    expect(row).toMatchObject({
      provider: 'prov-a',
      kind: 'messages',
      input_tokens: sent.inputTokens,
      output_tokens: sent.outputTokens,
      status_code: 200,
    });
    expect(row.cost_usd).toBeCloseTo((sent.inputTokens * 3 + sent.outputTokens * 15) / 1e6, 9);
  });

  it('chat rows say kind chat', async () => {
    const user = requester('chat');
    await openai(user).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(await rowOf(user)).toMatchObject({ kind: 'chat', provider: 'prov-b' });
  });
});

describe('kind in the management API', () => {
  it('/api/logs filters by kind, refuses an unknown kind, and /api/stats counts by_kind', async () => {
    const token = proxy.account.token;
    const responses = (await (await proxy.api('/api/logs?limit=500&kind=responses', { token })).json()) as {
      items: Array<{ kind: string }>;
    };
    expect(responses.items.length).toBeGreaterThan(0);
    expect(new Set(responses.items.map((r) => r.kind))).toEqual(new Set(['responses']));

    const bad = await proxy.api('/api/logs?kind=completions', { token });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe('kind');

    const all = (await (await proxy.api('/api/logs?limit=500', { token })).json()) as {
      items: Array<{ kind: string }>;
    };
    // Stats come from rollups folded from the usage stream a moment after the rows.
    await proxy.waitForRows(token, all.items.length);
    const stats = (await (await proxy.api('/api/stats', { token })).json()) as {
      by_kind: Array<{ kind: string; requests: number }>;
    };
    const counted = Object.fromEntries(stats.by_kind.map((k) => [k.kind, k.requests]));
    const expected: Record<string, number> = {};
    for (const row of all.items) expected[row.kind] = (expected[row.kind] ?? 0) + 1;
    expect(counted).toEqual(expected);
    expect(Object.keys(counted)).toEqual(
      expect.arrayContaining(['responses', 'embeddings', 'models', 'count_tokens', 'messages', 'chat', 'other']),
    );
  });
});
