import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { fixtureEvents } from '../../fixtures';
import { decodeAll } from '../../support/fragments';

const user = [{ role: 'user', content: 'Hello' }];

describe('validate: only the fields the proxy requires', () => {
  const messagesCases: [string, unknown, { ok: true } | { ok: false; param: string }][] = [
    ['a minimal request', { model: 'claude-sonnet-4-6', max_tokens: 16, messages: user }, { ok: true }],
    [
      'content parts, tools and unknown fields',
      {
        model: 'm',
        max_tokens: 1,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
        tools: [],
        metadata: { a: 1 },
        stream: true,
      },
      { ok: true },
    ],
    ['no max_tokens', { model: 'm', messages: user }, { ok: false, param: 'max_tokens' }],
    ['max_tokens 0', { model: 'm', max_tokens: 0, messages: user }, { ok: false, param: 'max_tokens' }],
    ['max_tokens 1.5', { model: 'm', max_tokens: 1.5, messages: user }, { ok: false, param: 'max_tokens' }],
    ['max_tokens as a string', { model: 'm', max_tokens: '16', messages: user }, { ok: false, param: 'max_tokens' }],
    ['no model', { max_tokens: 16, messages: user }, { ok: false, param: 'model' }],
    ['an empty model', { model: '', max_tokens: 16, messages: user }, { ok: false, param: 'model' }],
    ['no messages', { model: 'm', max_tokens: 16 }, { ok: false, param: 'messages' }],
    ['messages not an array', { model: 'm', max_tokens: 16, messages: 'hi' }, { ok: false, param: 'messages' }],
    [
      'a message without role',
      { model: 'm', max_tokens: 16, messages: [{ content: 'x' }] },
      { ok: false, param: 'messages.0.role' },
    ],
    ['a body that is an array', [], { ok: false, param: '' }],
    ['a null body', null, { ok: false, param: '' }],
  ];

  it.each(messagesCases)('messages: %s', (_title, body, expected) => {
    const result = messagesDialect.validate(body);
    expect(result).toMatchObject(expected);
    if (!result.ok) expect(result.message.length).toBeGreaterThan(0);
    if (!result.ok && result.param) expect(result.message).toContain(result.param);
  });

  const chatCases: [string, unknown, { ok: true } | { ok: false; param: string }][] = [
    ['a minimal request (no max_tokens needed)', { model: 'gpt-4o-mini', messages: user }, { ok: true }],
    [
      'image parts, tool messages with null content, unknown fields',
      {
        model: 'm',
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }] },
          { role: 'assistant', content: null, tool_calls: [] },
        ],
        temperature: 0.2,
        max_tokens: null,
        stream: true,
        stream_options: { include_usage: true },
      },
      { ok: true },
    ],
    ['no model', { messages: user }, { ok: false, param: 'model' }],
    ['no messages', { model: 'm' }, { ok: false, param: 'messages' }],
    ['max_tokens -1', { model: 'm', messages: user, max_tokens: -1 }, { ok: false, param: 'max_tokens' }],
    [
      'content that is a number',
      { model: 'm', messages: [{ role: 'user', content: 5 }] },
      { ok: false, param: 'messages.0.content' },
    ],
  ];

  it.each(chatCases)('chat: %s', (_title, body, expected) => {
    expect(chatDialect.validate(body)).toMatchObject(expected);
  });
});

describe('errorBody: the error shapes of docs/errors-and-limits.md', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [404, 'not_found_error'],
    [429, 'rate_limit_error'],
    [504, 'timeout_error'],
    [500, 'api_error'],
  ])('messages style, status %i → %s', (status, type) => {
    expect(JSON.parse(messagesDialect.errorBody({ status, message: 'why' }))).toEqual({
      type: 'error',
      error: { type, message: 'why' },
    });
  });

  it('chat style carries message, type, param and code', () => {
    expect(
      JSON.parse(chatDialect.errorBody({ status: 400, message: 'messages: Field required', param: 'messages' })),
    ).toEqual({
      error: { message: 'messages: Field required', type: 'invalid_request_error', param: 'messages', code: null },
    });
    expect(JSON.parse(chatDialect.errorBody({ status: 401, message: 'bad' }))).toEqual({
      error: { message: 'bad', type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
    expect(JSON.parse(chatDialect.errorBody({ status: 429, message: 'slow', code: 'custom' })).error.code).toBe(
      'custom',
    );
  });

  it('stream error events parse as the dialect’s own errors', () => {
    const messages = decodeAll([messagesDialect.streamErrorEvent('stalled', 'stalled')]);
    const reader = messagesDialect.newStreamReader();
    messages.forEach((e) => reader.onEvent(e));
    expect(messages[0].event).toBe('error');
    expect(reader.outcome().error).toBe('stalled');
    const chat = chatDialect.newStreamReader();
    chat.onEvent({ data: '{"id":"x","model":"m","choices":[]}' });
    decodeAll([chatDialect.streamErrorEvent('stalled', 'stalled')]).forEach((e) => chat.onEvent(e));
    expect(chat.outcome().error).toBe('stalled');
  });
});

describe('stream usage on request', () => {
  const ask = (text: string) => {
    const raw = Buffer.from(text);
    const result = chatDialect.requestStreamUsage(JSON.parse(text), raw);
    return { text: result.body.toString('utf8'), added: result.added, same: result.body === raw };
  };

  it('chat adds include_usage only to a stream that did not ask for it, keeping other options', () => {
    expect(ask('{"model":"m","stream":true}')).toEqual({
      text: '{"stream_options":{"include_usage":true},"model":"m","stream":true}',
      added: true,
      same: false,
    });
    expect(ask('{"stream":true,"stream_options":{"foo":1}}')).toEqual({
      text: '{"stream":true,"stream_options":{"include_usage":true,"foo":1}}',
      added: true,
      same: false,
    });
    expect(ask('{"stream":true,"stream_options":{"include_usage":false}}')).toMatchObject({
      text: '{"stream":true,"stream_options":{"include_usage":true}}',
      added: true,
    });
    expect(ask('{"stream":true,"stream_options":{ }}')).toMatchObject({
      text: '{"stream":true,"stream_options":{"include_usage":true }}',
      added: true,
    });
    expect(ask('{"stream":true,"stream_options":null}')).toMatchObject({
      text: '{"stream":true,"stream_options":{"include_usage":true}}',
      added: true,
    });
    expect(ask('{"stream":true,"stream_options":{"include_usage":true}}')).toMatchObject({ added: false, same: true });
    expect(ask('{"model":"m"}')).toMatchObject({ added: false, same: true });
  });

  it('every byte of the body but the added field reaches the provider unchanged: big integers, 1.0, escapes, spacing, key order', () => {
    const text =
      '{ "seed": 9007199254740993,\n  "temperature": 1.0, "top_p": 1e0, "model": "m\u00e9", "messages": [{"role":"user","content":"{\\"stream_options\\": 1} ü 😀"}],\t"stream": true }';
    const { text: sent, added } = ask(text);
    expect(added).toBe(true);
    const inserted = '"stream_options":{"include_usage":true},';
    expect(sent).toBe(`{${inserted}${text.slice(1)}`);
    expect(sent).toContain('"seed": 9007199254740993');
    expect(sent).toContain('"temperature": 1.0');
    expect(JSON.parse(sent).stream_options).toEqual({ include_usage: true });
  });

  it('edits the last of a repeated key, the one JSON parsers keep', () => {
    expect(ask('{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"x":1.50}}').text).toBe(
      '{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"include_usage":true,"x":1.50}}',
    );
  });

  it('messages never needs it', () => {
    const raw = Buffer.from('{"stream":true}');
    expect(messagesDialect.requestStreamUsage({ stream: true }, raw)).toEqual({ body: raw, added: false });
  });

  it.each([
    ['prov-b/text.sse', 'prov-b/text-no-usage.sse'],
    ['prov-c/text.sse', 'prov-c/text-no-usage.sse'],
  ])('withoutAddedUsage turns %s (usage asked) into %s (not asked), byte for byte', (asked, unasked) => {
    const events = fixtureEvents(asked);
    expect(events.map((e) => chatDialect.withoutAddedUsage(e)).join('')).toBe(
      fixtureEvents(unasked)
        .map((e) => e.raw)
        .join(''),
    );
  });

  it('withoutAddedUsage keeps every other byte, and other lines of the event', () => {
    // Azure-style first chunk: empty choices and `usage: null`: the chunk stays, without its usage.
    expect(
      chatDialect.withoutAddedUsage({
        data: '{"choices":[],"prompt_filter_results":[],"usage":null}',
        raw: 'id: 7\ndata: {"choices":[],"prompt_filter_results":[],"usage":null}\n\n',
      }),
    ).toBe('id: 7\ndata: {"choices":[],"prompt_filter_results":[]}\n\n');
    const spaced = '{ "usage" : null , "n" : 1.50 }';
    expect(chatDialect.withoutAddedUsage({ data: spaced, raw: `data:${spaced}\n\n` })).toBe('data:{ "n" : 1.50 }\n\n');
    for (const raw of ['data: [DONE]\n\n', 'data: {"choices":[{"delta":{"content":"usage"}}]}\n\n'])
      expect(chatDialect.withoutAddedUsage({ data: raw.slice(6, -2), raw })).toBe(raw);
    for (const e of fixtureEvents('prov-a/text.sse')) expect(messagesDialect.withoutAddedUsage(e)).toBe(e.raw);
  });
});
