import { assembleMessagesResponse, synthesizeMessagesEvents } from '../../../lambda/cache/replay/messages';
import { SseDecoder } from '../../../lambda/sse/sse-decoder';
import type { SseEvent } from '../../../lambda/sse/sse-event';
import { expectedUsage, fixtureEvents, fixtureJson, fixtureNames, isStreamFixture } from '../../fixtures';

type Message = {
  content: Record<string, unknown>[];
  usage: Record<string, unknown>;
  stop_reason: unknown;
  [key: string]: unknown;
};

function decode(text: string): SseEvent[] {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

const roundTrip = (body: unknown) => assembleMessagesResponse(decode(synthesizeMessagesEvents(body).join('')));

const successful = fixtureNames('prov-a').filter((name) => expectedUsage(name).status < 300);
const jsonFixtures = successful.filter((name) => !isStreamFixture(name));
const streamFixtures = successful.filter((name) => isStreamFixture(name) && expectedUsage(name).complete);

function sse(...events: Record<string, unknown>[]): SseEvent[] {
  return decode(events.map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
}

describe('Messages replay: stored JSON → stream → JSON', () => {
  it('has fixtures to check', () => {
    expect(jsonFixtures.length).toBeGreaterThan(0);
    expect(streamFixtures.length).toBeGreaterThan(0);
  });

  it.each(jsonFixtures)('%s comes back identical', (name) => {
    expect(roundTrip(fixtureJson(name))).toEqual(fixtureJson(name));
  });

  it.each(jsonFixtures)('%s becomes well-framed events in the order the API sends them', (name) => {
    const events = synthesizeMessagesEvents(fixtureJson(name));
    for (const raw of events) {
      expect(raw).toMatch(/^event: [a-z_]+\ndata: \{.*\}\n\n$/s);
      const [event] = decode(raw);
      expect(JSON.parse(event.data).type).toBe(event.event);
    }
    const types = events.map((raw) => decode(raw)[0].event);
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    const start = JSON.parse(decode(events[0])[0].data).message;
    expect(start).toMatchObject({ content: [], stop_reason: null });
    expect(start.usage.output_tokens).toBe(0);
  });
});

describe('Messages replay: stored stream → JSON', () => {
  it.each(streamFixtures)('%s assembles into the message its events describe', (name) => {
    const events = fixtureEvents(name);
    const message = assembleMessagesResponse(events) as Message;
    const payloads = events.map((e) => JSON.parse(e.data));
    const start = payloads.find((p) => p.type === 'message_start').message;
    const lastDelta = payloads.filter((p) => p.type === 'message_delta').at(-1);
    expect(message.id).toBe(start.id);
    expect(message.model).toBe(start.model);
    expect(message.stop_reason).toBe(lastDelta.delta.stop_reason);
    expect(message.usage.output_tokens).toBe(lastDelta.usage.output_tokens);
    const texts = new Map<number, string>();
    for (const p of payloads)
      if (p.delta?.type === 'text_delta') texts.set(p.index, (texts.get(p.index) ?? '') + p.delta.text);
    for (const [index, text] of texts) expect(message.content[index].text).toBe(text);
    expect(message.content.length).toBe(payloads.filter((p) => p.type === 'content_block_start').length);
  });

  it.each(streamFixtures)('%s survives a second trip through synthesised events', (name) => {
    const message = assembleMessagesResponse(fixtureEvents(name));
    expect(roundTrip(message)).toEqual(message);
  });

  it('joins tool input fragments into an object, and reads no fragments as {}', () => {
    const message = assembleMessagesResponse(
      sse(
        {
          type: 'message_start',
          message: {
            id: 'm',
            type: 'message',
            role: 'assistant',
            model: 'x',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 5, output_tokens: 1 },
          },
        },
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 't1', name: 'lookup', input: {} },
        },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
        { type: 'ping' },
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: '{"order": "A-1", "items": [1, ' },
        },
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: '2], "note": "ünïcode"}' },
        },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 't2', name: 'now', input: {} },
        },
        { type: 'content_block_stop', index: 1 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { output_tokens: 30 },
        },
        { type: 'message_stop' },
      ),
    ) as Message;
    expect(message.content).toEqual([
      { type: 'tool_use', id: 't1', name: 'lookup', input: { order: 'A-1', items: [1, 2], note: 'ünïcode' } },
      { type: 'tool_use', id: 't2', name: 'now', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('overwrites usage from message_delta (running totals), keeping fields it does not repeat', () => {
    const message = assembleMessagesResponse(
      sse(
        {
          type: 'message_start',
          message: {
            id: 'm',
            model: 'x',
            content: [],
            usage: { input_tokens: 43, output_tokens: 1, service_tier: 'standard' },
          },
        },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 61, output_tokens: 2 } },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { output_tokens: 7, cache_read_input_tokens: null },
        },
      ),
    ) as Message;
    expect(message.usage).toEqual({ input_tokens: 61, output_tokens: 7, service_tier: 'standard' });
  });

  it('keeps thinking with its signature, citations, and blocks that arrive whole', () => {
    const citation = {
      type: 'char_location',
      cited_text: 'x',
      document_index: 0,
      start_char_index: 0,
      end_char_index: 1,
    };
    const message = assembleMessagesResponse(
      sse(
        {
          type: 'message_start',
          message: { id: 'm', model: 'x', content: [], usage: { input_tokens: 1, output_tokens: 1 } },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig==' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '', citations: [] } },
        { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Cited ' } },
        { type: 'content_block_delta', index: 2, delta: { type: 'citations_delta', citation } },
        { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'text.' } },
        { type: 'content_block_stop', index: 2 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 9 },
          context_management: { applied_edits: [] },
        },
        { type: 'message_stop' },
      ),
    ) as Message;
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig==' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Cited text.', citations: [citation] },
    ]);
    expect(message.context_management).toEqual({ applied_edits: [] });
    expect(roundTrip(message)).toEqual(message);
  });

  it('round-trips tool use, server tool results and stop sequences through synthesised events', () => {
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'fam-haiku-4-5-20251001',
      content: [
        { type: 'text', text: 'Checking. 🔍' },
        { type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'weather' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 's1',
          content: [{ type: 'web_search_result', url: 'https://example.com', title: 'x' }],
        },
        { type: 'tool_use', id: 't1', name: 'lookup', input: { order: 'A-1', nested: { deep: [true, null] } } },
        { type: 'tool_use', id: 't2', name: 'now', input: {} },
      ],
      stop_reason: 'stop_sequence',
      stop_sequence: '###',
      usage: {
        input_tokens: 412,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 20,
        output_tokens: 88,
        server_tool_use: { web_search_requests: 1 },
        service_tier: 'standard',
      },
    };
    expect(roundTrip(message)).toEqual(message);
  });

  it('skips non-JSON data and returns undefined for a stream without message_start', () => {
    expect(assembleMessagesResponse(decode('event: ping\ndata: not json\n\n'))).toBeUndefined();
    expect(assembleMessagesResponse([])).toBeUndefined();
  });
});
