/**
 * The response cache on the Responses API, through the openai SDK: a hit replayed in the form
 * asked, stream and JSON entries served to each other, chat and responses kept apart, and
 * previous_response_id never served from the cache.
 */
import { randomBytes } from 'node:crypto';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { RESPONSES_COST, RESPONSES_TEXT, sdkEndpoints } from './support/sdk-endpoints';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const { requester, rowOf, openai } = sdkEndpoints(() => proxy);

describe('the response cache on the Responses API', () => {
  const input = () => `cache me ${randomBytes(6).toString('hex')}`;

  it('a hit is replayed in the form asked (JSON → stream), 0 tokens, saved_usd = the original cost', async () => {
    const question = input();
    const first = requester('cache-1');
    const miss = await openai(first, 'prov-b', { 'x-proxy-cache': 'true' })
      .responses.create({ model: 'gpt-4.1-2025-04-14', input: question })
      .withResponse();
    expect(miss.response.headers.get('x-proxy-cache')).toBe('MISS');
    await rowOf(first);

    const second = requester('cache-2');
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    const { data: stream, response } = await openai(second, 'prov-b', { 'x-proxy-cache': 'true' })
      .responses.create({ model: 'gpt-4.1-2025-04-14', input: question, stream: true })
      .withResponse();
    expect(response.headers.get('x-proxy-cache')).toBe('HIT');
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(text).toBe(RESPONSES_TEXT);
    expect(fake.requests.length).toBe(before);
    const row = await rowOf(second);
    expect(row).toMatchObject({
      kind: 'responses',
      cached: true,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      stream: true,
    });
    expect(row.saved_usd).toBeCloseTo(RESPONSES_COST, 9);
  });

  it('a stored stream is served to a JSON request through responses.stream()… and back as JSON', async () => {
    const question = input();
    const first = requester('cache-s1');
    for await (const _ of await openai(first, 'prov-b', { 'x-proxy-cache': 'true' }).responses.create({
      model: 'gpt-4.1-2025-04-14',
      input: question,
      stream: true,
    }));
    await rowOf(first);
    const second = requester('cache-s2');
    const { data, response } = await openai(second, 'prov-b', { 'x-proxy-cache': 'true' })
      .responses.create({ model: 'gpt-4.1-2025-04-14', input: question })
      .withResponse();
    expect(response.headers.get('x-proxy-cache')).toBe('HIT');
    expect(data.output_text).toBe(RESPONSES_TEXT);
    expect(data.usage?.input_tokens).toBe(2036);
  });

  it('a chat request and a responses request never share an entry', async () => {
    const question = input();
    await openai(requester('ns-1'), 'prov-b', { 'x-proxy-cache': 'true' }).responses.create({
      model: 'gpt-4o-mini',
      input: question,
    });
    const { response } = await openai(requester('ns-2'), 'prov-b', { 'x-proxy-cache': 'true' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] })
      .withResponse();
    expect(response.headers.get('x-proxy-cache')).toBe('MISS');
  });

  it('a request with previous_response_id is never served from the cache', async () => {
    const question = input();
    const body = { model: 'gpt-4.1-2025-04-14', input: question, previous_response_id: 'resp_prior' };
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    await openai(requester('prev-1'), 'prov-b', { 'x-proxy-cache': 'true' }).responses.create(body);
    const again = requester('prev-2');
    const { response } = await openai(again, 'prov-b', { 'x-proxy-cache': 'true' })
      .responses.create(body)
      .withResponse();
    expect(response.headers.get('x-proxy-cache')).toBe('BYPASS');
    expect(fake.requests.length).toBe(before + 2);
    expect(await rowOf(again)).toMatchObject({ cached: false, input_tokens: 2036 });
  });
});
