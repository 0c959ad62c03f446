import { providerById } from '../../../lambda/providers/registry';
import type { Dialect, StreamOutcome } from '../../../lambda/providers/types';
import { NO_USAGE, tokenCount } from '../../../lambda/providers/usage';
import { chatDialect } from '../../../lambda/providers/dialects/chat';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { findErrorMessage } from '../../../lambda/providers/dialects/error-text';
import {
  expectedUsage,
  fixtureFilesOnDisk,
  fixtureJson,
  fixtureNames,
  fixtureText,
  isStreamFixture,
} from '../../fixtures';
import { decodeAll } from '../../support/fragments';

function dialectOf(name: string): Dialect {
  const provider = providerById(name.split('/')[0]);
  if (!provider) throw new Error(`no provider for fixture ${name}`);
  return provider.dialect;
}

/** The fields expected-usage.json records, as the dialect reports them. */
function observed(model: string | undefined, outcome: Partial<StreamOutcome>, error: string | undefined) {
  const usage = outcome.usage ?? NO_USAGE;
  return {
    model: model ?? null,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    error,
  };
}

function wanted(name: string) {
  const { model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, error } = expectedUsage(name);
  return { model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, error };
}

const jsonFixtures = fixtureNames().filter((name) => !isStreamFixture(name));
const streamFixtures = fixtureNames().filter(isStreamFixture);

describe('usage extraction over every fixture', () => {
  it('covers every fixture on disk, for all five providers', () => {
    expect(fixtureNames().sort()).toEqual(fixtureFilesOnDisk());
    expect(new Set(fixtureNames().map((n) => n.split('/')[0]))).toEqual(
      new Set(['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e']),
    );
  });

  it.each(fixtureNames())('%s is read by the right dialect', (name) => {
    expect(dialectOf(name).name).toBe(name.startsWith('prov-a/') ? 'messages' : 'chat');
  });

  it.each(jsonFixtures)('%s: readResponse / upstreamErrorMessage give the expected result', (name) => {
    const dialect = dialectOf(name);
    const body = fixtureJson(name);
    const read = dialect.readResponse(body);
    expect(observed(read.model, read, dialect.upstreamErrorMessage(body))).toEqual(wanted(name));
    if (expectedUsage(name).status >= 400) expect(read.usage).toBeUndefined();
  });

  it.each(streamFixtures)('%s: the stream reader fed the decoded events gives the expected result', (name) => {
    const dialect = dialectOf(name);
    const reader = dialect.newStreamReader();
    for (const event of decodeAll([Buffer.from(fixtureText(name))])) reader.onEvent(event);
    const outcome = reader.outcome();
    expect(observed(outcome.model, outcome, outcome.error)).toEqual(wanted(name));
    expect(outcome.complete).toBe(expectedUsage(name).complete);
  });

  it.each(streamFixtures)('%s: the outcome reported before the terminal event says incomplete', (name) => {
    const dialect = dialectOf(name);
    const reader = dialect.newStreamReader();
    const events = decodeAll([fixtureText(name)]);
    for (const event of events.slice(0, -1)) reader.onEvent(event);
    expect(reader.outcome().complete).toBe(false);
  });
});

describe('upstream error messages', () => {
  const table: [string, unknown, string | undefined][] = [
    ['both API styles: {error:{message}}', { error: { message: 'x', type: 'invalid_request_error' } }, 'x'],
    [
      'messages style: {type:error, error:{…}}',
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      'Overloaded',
    ],
    ['Gemini: an array around the error', [{ error: { message: 'x', code: 400 } }], 'x'],
    ['Mistral: {message}', { object: 'error', message: 'x', type: 'rate_limited' }, 'x'],
    ['{detail}', { detail: 'Not Found' }, 'Not Found'],
    ['error as a plain string', { error: 'bad key' }, 'bad key'],
    ['no message anywhere', { error: { code: 500 } }, undefined],
    ['an empty array', [], undefined],
    ['null', null, undefined],
    ['a string body', 'Bad Gateway', 'Bad Gateway'],
    [
      "Mistral's 422: message is an object with a detail array",
      {
        object: 'error',
        message: {
          detail: [
            {
              type: 'missing',
              loc: ['body', 'messages'],
              msg: 'Field required',
              input: { model: 'mistral-small-latest' },
            },
          ],
        },
        type: 'invalid_request_message_error',
        param: null,
        code: null,
      },
      'body.messages: Field required',
    ],
    [
      'several validation items',
      {
        detail: [
          { loc: ['body', 'model'], msg: 'Field required' },
          { loc: ['body', 'messages', 0, 'role'], msg: "Input should be 'user'" },
        ],
      },
      "body.model: Field required; body.messages.0.role: Input should be 'user'",
    ],
    ['{detail:{message}}', { detail: { message: 'quota gone' } }, 'quota gone'],
    ['error object with only a detail', { error: { detail: 'model not loaded' } }, 'model not loaded'],
    ['an array of plain strings', { errors: ['first', 'second'] }, 'first; second'],
    ['whitespace only', { message: '   ' }, undefined],
    ['a success body', { id: 'x', choices: [] }, undefined],
  ];

  it.each(table)('%s', (_title, body, message) => {
    expect(findErrorMessage(body)).toBe(message);
    expect(chatDialect.upstreamErrorMessage(body)).toBe(message);
    expect(messagesDialect.upstreamErrorMessage(body)).toBe(message);
  });
});

describe('stream readers beyond the fixtures', () => {
  const sse = (events: object[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
  const messagesSse = (events: { type: string }[]) =>
    events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
  const read = (dialect: Dialect, text: string) => {
    const reader = dialect.newStreamReader();
    for (const event of decodeAll([text])) reader.onEvent(event);
    return reader.outcome();
  };

  it('messages: message_delta usage is a running total that overwrites, never adds; nulls do not erase', () => {
    const outcome = read(
      messagesDialect,
      messagesSse([
        {
          type: 'message_start',
          message: {
            model: 'claude-sonnet-4-6',
            usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 1 },
          },
        } as { type: string },
        { type: 'message_delta', usage: { output_tokens: 20 } } as { type: string },
        { type: 'message_delta', usage: { output_tokens: 30, cache_read_input_tokens: null } } as { type: string },
        { type: 'message_stop' },
      ]),
    );
    expect(outcome).toEqual({
      model: 'claude-sonnet-4-6',
      usage: { inputTokens: 115, outputTokens: 30, cacheReadTokens: 100, cacheWriteTokens: 5 },
      error: undefined,
      complete: true,
      answerEnded: true,
      deliveredChars: 0,
    });
  });

  it('chat: the last non-null usage wins, later `usage: null` chunks do not erase it', () => {
    const base = { id: 'c', object: 'chat.completion.chunk', model: 'gpt-4o-mini' };
    const outcome = read(
      chatDialect,
      sse([
        { ...base, choices: [{ index: 0, delta: { content: 'a' } }], usage: null },
        { ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
        { ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
        { ...base, choices: [], usage: null },
      ]) + 'data: [DONE]\n\n',
    );
    expect(outcome).toEqual({
      model: 'gpt-4o-mini',
      usage: { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
      error: undefined,
      complete: true,
      answerEnded: false,
      deliveredChars: 1,
    });
  });

  it('chat: an explicit `"error": null` on a chunk is not a stream error', () => {
    const outcome = read(
      chatDialect,
      sse([{ id: 'c', model: 'm', choices: [{ index: 0, delta: { content: 'hi' } }], error: null }]) +
        'data: [DONE]\n\n',
    );
    expect(outcome.error).toBeUndefined();
  });

  it('chat: text that merely mentions "usage" or "error" does not confuse the reader', () => {
    const outcome = read(
      chatDialect,
      sse([
        { id: 'c', model: 'm', choices: [{ index: 0, delta: { content: 'x' } }] },
        { id: 'c', model: 'm', choices: [{ index: 0, delta: { content: '{"usage":{"prompt_tokens":999}} "error"' } }] },
      ]) + 'data: [DONE]\n\n',
    );
    expect(outcome).toEqual({
      model: 'm',
      usage: undefined,
      error: undefined,
      complete: true,
      answerEnded: false,
      deliveredChars: 46,
    });
  });

  it("the answer has ended at chat's finish reason and Anthropic's message_delta, before the usage and the terminal event", () => {
    const base = { id: 'c', object: 'chat.completion.chunk', model: 'gpt-4o-mini' };
    const content = sse([{ ...base, choices: [{ index: 0, delta: { content: '"finish_reason":"stop"' } }] }]);
    expect(read(chatDialect, content).answerEnded).toBe(false);
    const finished = content + sse([{ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }]);
    expect(read(chatDialect, finished)).toMatchObject({ answerEnded: true, complete: false, usage: undefined });
    const started = messagesSse([
      { type: 'message_start', message: { model: 'claude-sonnet-4-6' } } as { type: string },
    ]);
    expect(read(messagesDialect, started).answerEnded).toBe(false);
    const delta = messagesSse([
      { type: 'message_start', message: { model: 'claude-sonnet-4-6' } } as { type: string },
      { type: 'message_delta', usage: { output_tokens: 3 } } as { type: string },
    ]);
    expect(read(messagesDialect, delta)).toMatchObject({ answerEnded: true, complete: false });
  });

  it('token counts: absent, null, negative, fractional and non-numbers are coerced safely', () => {
    expect([undefined, null, -3, 2.9, '12', Number.NaN, Number.POSITIVE_INFINITY, 42].map(tokenCount)).toEqual([
      0, 0, 0, 2, 0, 0, 0, 42,
    ]);
  });
});
