import { assembleChatResponse, synthesizeChatEvents } from '../../../lambda/cache/replay/chat';
import { SseDecoder } from '../../../lambda/sse/sse-decoder';
import type { SseEvent } from '../../../lambda/sse/sse-event';
import {
  expectedUsage,
  fixtureEvents,
  fixtureJson,
  fixtureNames,
  isStreamFixture,
  type ProviderFolder,
} from '../../fixtures';

type Completion = {
  choices: { message: Record<string, unknown>; finish_reason: unknown; index: number }[];
  usage?: Record<string, unknown>;
  [key: string]: unknown;
};

function decode(text: string): SseEvent[] {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

const roundTrip = (body: unknown) => assembleChatResponse(decode(synthesizeChatEvents(body).join('')));

const CHAT_PROVIDERS: ProviderFolder[] = ['prov-b', 'prov-c', 'prov-d', 'prov-e'];
const successful = CHAT_PROVIDERS.flatMap((p) => fixtureNames(p)).filter((name) => expectedUsage(name).status < 300);
const jsonFixtures = successful.filter((name) => !isStreamFixture(name));
const streamFixtures = successful.filter((name) => isStreamFixture(name) && expectedUsage(name).complete);

function chunks(...payloads: Record<string, unknown>[]): SseEvent[] {
  return decode([...payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`), 'data: [DONE]\n\n'].join(''));
}

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1771000000, model: 'fam-4o-mini' };

describe('Chat replay: stored JSON → stream → JSON', () => {
  it('has fixtures to check for every chat provider', () => {
    for (const provider of CHAT_PROVIDERS) expect(successful.some((name) => name.startsWith(provider))).toBe(true);
    expect(jsonFixtures.length).toBeGreaterThan(0);
    expect(streamFixtures.length).toBeGreaterThan(0);
  });

  it.each(jsonFixtures)('%s comes back identical', (name) => {
    expect(roundTrip(fixtureJson(name))).toEqual(fixtureJson(name));
  });

  it.each(jsonFixtures)('%s becomes chunk events: role, content, finish, usage, [DONE]', (name) => {
    const events = synthesizeChatEvents(fixtureJson(name));
    for (const raw of events) expect(raw).toMatch(/^data: .*\n\n$/s);
    expect(events.at(-1)).toBe('data: [DONE]\n\n');
    const payloads = events.slice(0, -1).map((raw) => JSON.parse(decode(raw)[0].data));
    for (const p of payloads) expect(p.object).toBe('chat.completion.chunk');
    expect(payloads[0].choices[0].delta.role).toBe('assistant');
    const usageChunk = payloads.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual((fixtureJson(name) as Completion).usage);
    expect(payloads.at(-2).choices[0].finish_reason).toBe((fixtureJson(name) as Completion).choices[0].finish_reason);
  });
});

describe('Chat replay: stored stream → JSON', () => {
  it.each(streamFixtures)('%s assembles into a chat.completion with the streamed content and usage', (name) => {
    const events = fixtureEvents(name);
    const completion = assembleChatResponse(events) as Completion;
    const payloads = events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toBe(payloads[0].id);
    expect(completion.model).toBe(payloads[0].model);
    expect(completion.choices[0].message.role).toBe('assistant');
    const contents = payloads.flatMap((p) => p.choices ?? []).map((c) => c.delta?.content);
    if (contents.every((c) => typeof c === 'string' || c == null)) {
      expect(completion.choices[0].message.content).toBe(contents.filter((c) => typeof c === 'string').join(''));
    }
    expect(completion.choices[0].finish_reason).toBe(
      payloads.flatMap((p) => p.choices ?? []).find((c) => c.finish_reason)?.finish_reason,
    );
    const lastUsage = payloads
      .map((p) => p.usage ?? p.x_groq?.usage)
      .filter(Boolean)
      .at(-1);
    if (lastUsage) expect(completion.usage).toEqual(lastUsage);
    else expect(completion).not.toHaveProperty('usage');
  });

  it.each(streamFixtures)('%s survives a second trip through synthesised events', (name) => {
    const completion = assembleChatResponse(fixtureEvents(name));
    expect(roundTrip(completion)).toEqual(completion);
  });

  it('joins typed content parts (Mistral reasoning) into the shape of the whole answer', () => {
    const completion = assembleChatResponse(fixtureEvents('prov-d/reasoning.sse')) as Completion;
    expect(completion.choices[0].message.content).toEqual([
      { type: 'thinking', thinking: [{ type: 'text', text: 'Three times four is twelve.' }] },
      { type: 'text', text: '3 × 4 = 12' },
    ]);
  });

  it('merges tool-call fragments by index and keeps reasoning text', () => {
    const completion = assembleChatResponse(
      chunks(
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { role: 'assistant', content: null, reasoning_content: 'Need ' },
              logprobs: null,
              finish_reason: null,
            },
          ],
          usage: null,
        },
        {
          ...base,
          choices: [{ index: 0, delta: { reasoning_content: 'the weather.' }, logprobs: null, finish_reason: null }],
          usage: null,
        },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
                ],
              },
              logprobs: null,
              finish_reason: null,
            },
          ],
        },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
              logprobs: null,
              finish_reason: null,
            },
          ],
        },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index: 1, id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
                ],
              },
              logprobs: null,
              finish_reason: null,
            },
          ],
        },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { arguments: '"Zürich"}' } }] },
              logprobs: null,
              finish_reason: null,
            },
          ],
        },
        { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }] },
        { ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 } },
      ),
    ) as Completion;
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          reasoning_content: 'Need the weather.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Zürich"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 });
    expect(roundTrip(completion)).toEqual(completion);
  });

  it('keeps several choices apart and joins logprobs', () => {
    const token = (t: string) => ({ token: t, logprob: -0.1, bytes: null, top_logprobs: [] });
    const completion = assembleChatResponse(
      chunks(
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { role: 'assistant', content: 'A' },
              logprobs: { content: [token('A')], refusal: null },
              finish_reason: null,
            },
          ],
        },
        {
          ...base,
          choices: [
            {
              index: 1,
              delta: { role: 'assistant', content: 'B' },
              logprobs: { content: [token('B')], refusal: null },
              finish_reason: null,
            },
          ],
        },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { content: 'a' },
              logprobs: { content: [token('a')], refusal: null },
              finish_reason: 'stop',
            },
          ],
        },
        {
          ...base,
          choices: [
            {
              index: 1,
              delta: { content: 'b' },
              logprobs: { content: [token('b')], refusal: null },
              finish_reason: 'length',
            },
          ],
        },
      ),
    ) as Completion;
    expect(completion.choices.map((c) => [c.message.content, c.finish_reason])).toEqual([
      ['Aa', 'stop'],
      ['Bb', 'length'],
    ]);
    expect((completion.choices[1] as unknown as { logprobs: { content: unknown[] } }).logprobs.content).toEqual([
      token('B'),
      token('b'),
    ]);
    expect(roundTrip(completion)).toEqual(completion);
  });

  it("reads Groq's usage from x_groq and keeps its request id", () => {
    const completion = assembleChatResponse(fixtureEvents('prov-e/x-groq-only.sse')) as Completion;
    expect(completion.usage).toMatchObject({ prompt_tokens: 38, completion_tokens: 14 });
    expect(completion.x_groq).toMatchObject({ id: expect.any(String) });
    expect(completion.x_groq).not.toHaveProperty('usage');
  });

  it('ignores [DONE], comments and non-JSON data; no chunks means no answer', () => {
    expect(assembleChatResponse(decode(': keep-alive\n\ndata: [DONE]\n\n'))).toBeUndefined();
    const completion = assembleChatResponse(
      decode(
        `: comment\n\ndata: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] })}\n\ndata: oops\n\ndata: [DONE]\n\n`,
      ),
    ) as Completion;
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: 'hi' });
  });
});
