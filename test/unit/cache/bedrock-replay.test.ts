/**
 * Bedrock cache hits in the other form (docs/caching.md, "How a hit is served"): Converse ↔
 * ConverseStream and InvokeModel ↔ InvokeModelWithResponseStream for Anthropic's messages body.
 * What converts does so exactly (a round trip gives the stored answer back); what doesn't is
 * `undefined`, which the cache serves as a miss.
 */
import { Readable } from 'node:stream';
import {
  EventStreamDecoder,
  encodeEventStreamMessage,
  type EventStreamMessage,
} from '../../../lambda/eventstream/event-stream-decoder';
import { replayCached, type ReplayRequest } from '../../../lambda/cache/replay';
import { assembleConverseResponse, synthesizeConverseFrames } from '../../../lambda/cache/replay/converse';
import { assembleInvokeResponse, synthesizeInvokeFrames } from '../../../lambda/cache/replay/invoke';
import { assembleMessagesResponse } from '../../../lambda/cache/replay/messages';
import type { CachedResponse } from '../../../lambda/cache/response-cache';
import { converseDialect } from '../../../lambda/providers/dialects/converse';
import { invokeDialect } from '../../../lambda/providers/dialects/invoke';
import { messagesDialect } from '../../../lambda/providers/dialects/messages';
import { NO_USAGE } from '../../../lambda/providers/usage';
import { fixtureEvents, fixtureJson, fixtureNames, isStreamFixture, expectedUsage } from '../../fixtures';

const decodeFrames = (frames: Buffer[]): EventStreamMessage[] => {
  const decoder = new EventStreamDecoder();
  const messages = frames.flatMap((frame) => decoder.push(frame));
  decoder.end();
  expect(decoder.problem).toBeUndefined();
  return messages;
};
const event = (type: string, payload: unknown) => encodeEventStreamMessage({ event: type }, payload);
const chunk = (data: unknown) =>
  event('chunk', { bytes: Buffer.from(JSON.stringify(data)).toString('base64'), p: 'abcdef' });

const usage = {
  inputTokens: 25,
  outputTokens: 11,
  totalTokens: 1700,
  cacheReadInputTokens: 1536,
  cacheWriteInputTokens: 128,
};
const converseAnswers: Record<string, unknown> = {
  text: {
    metrics: { latencyMs: 412 },
    output: { message: { content: [{ text: 'Hello! How can I help you today?' }], role: 'assistant' } },
    stopReason: 'end_turn',
    usage,
  },
  'reasoning, text and tool use, with every top-level field': {
    additionalModelResponseFields: { stop_sequence: null },
    metrics: { latencyMs: 1200 },
    output: {
      message: {
        role: 'assistant',
        content: [
          {
            reasoningContent: { reasoningText: { text: 'The user wants the weather.', signature: 'EqQBCkYIBxgCKkD' } },
          },
          { reasoningContent: { redactedContent: 'RXFRQkNrWUlCeGdDS2tE' } },
          { text: 'Let me check.' },
          {
            toolUse: {
              toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
              name: 'get_weather',
              input: { city: 'Paris', units: ['C'], nested: { a: null } },
            },
          },
          { toolUse: { toolUseId: 'tooluse_empty', name: 'now', input: {} } },
        ],
      },
    },
    performanceConfig: { latency: 'standard' },
    serviceTier: { type: 'default' },
    stopReason: 'tool_use',
    trace: { guardrail: { modelOutput: ['x'] } },
    usage,
  },
};

describe('Converse ↔ ConverseStream', () => {
  it.each(Object.keys(converseAnswers))(
    '%s: a stored Converse answer becomes a stream that assembles back into it',
    (name) => {
      const frames = synthesizeConverseFrames(converseAnswers[name]);
      expect(frames).toBeDefined();
      expect(assembleConverseResponse(decodeFrames(frames!))).toEqual(converseAnswers[name]);
    },
  );

  it("a stored stream as Bedrock sends it (padding, text in pieces) assembles into Converse's answer", () => {
    const frames = [
      event('messageStart', { p: 'abc', role: 'assistant' }),
      ...['Hello', '! How can', ' I help you', ' today?'].map((text) =>
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { text }, p: 'abcdefgh' }),
      ),
      event('contentBlockStop', { contentBlockIndex: 0, p: 'ab' }),
      event('messageStop', { p: 'abcd', stopReason: 'end_turn' }),
      event('metadata', { metrics: { latencyMs: 412 }, p: 'a', usage }),
    ];
    expect(assembleConverseResponse(decodeFrames(frames))).toEqual(converseAnswers.text);
  });

  it('tool input sent in fragments is parsed once whole', () => {
    const frames = [
      event('messageStart', { role: 'assistant' }),
      event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'f' } } }),
      ...['{"ci', 'ty": "Pa', 'ris"}'].map((input) =>
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input } } }),
      ),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('messageStop', { stopReason: 'tool_use' }),
      event('metadata', { usage, metrics: { latencyMs: 1 } }),
    ];
    expect(assembleConverseResponse(decodeFrames(frames))).toEqual({
      output: {
        message: {
          role: 'assistant',
          content: [{ toolUse: { toolUseId: 't1', name: 'f', input: { city: 'Paris' } } }],
        },
      },
      stopReason: 'tool_use',
      usage,
      metrics: { latencyMs: 1 },
    });
  });

  const complete = (middle: Buffer[]) => [
    event('messageStart', { role: 'assistant' }),
    ...middle,
    event('messageStop', { stopReason: 'end_turn' }),
    event('metadata', { usage }),
  ];
  it.each([
    [
      'a delta type not converted here (a citation)',
      complete([event('contentBlockDelta', { contentBlockIndex: 0, delta: { citation: { title: 'x' } } })]),
    ],
    ['an event type not known here', complete([event('somethingNew', { a: 1 })])],
    [
      'a block index that skips one',
      complete([event('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'x' } })]),
    ],
    [
      'tool input that is not JSON',
      complete([
        event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't', name: 'f' } } }),
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"a' } } }),
      ]),
    ],
    [
      'an unknown field in the closing metadata',
      [
        event('messageStart', { role: 'assistant' }),
        event('messageStop', { stopReason: 'end_turn' }),
        event('metadata', { usage, newThing: 1 }),
      ],
    ],
    [
      'no metadata event',
      [event('messageStart', { role: 'assistant' }), event('messageStop', { stopReason: 'end_turn' })],
    ],
    [
      'an exception',
      complete([encodeEventStreamMessage({ exception: 'throttlingException' }, { message: 'slow down' })]),
    ],
  ])('a stream with %s is not assembled', (_name, frames) => {
    expect(assembleConverseResponse(decodeFrames(frames))).toBeUndefined();
  });

  it.each([
    [
      'an image block',
      {
        output: { message: { role: 'assistant', content: [{ image: { format: 'png', source: { bytes: 'AAAA' } } }] } },
        stopReason: 'end_turn',
        usage,
      },
    ],
    [
      'citations',
      {
        output: { message: { role: 'assistant', content: [{ citationsContent: { content: [{ text: 'x' }] } }] } },
        stopReason: 'end_turn',
        usage,
      },
    ],
    [
      'a top-level field not known here',
      {
        output: { message: { role: 'assistant', content: [{ text: 'x' }] } },
        stopReason: 'end_turn',
        usage,
        somethingNew: 1,
      },
    ],
    ['no message', { stopReason: 'end_turn', usage }],
  ])('a Converse answer with %s is not turned into a stream', (_name, body) => {
    expect(synthesizeConverseFrames(body)).toBeUndefined();
  });
});

describe('InvokeModel ↔ InvokeModelWithResponseStream (Anthropic messages body)', () => {
  const messagesJson = fixtureNames('prov-a').filter(
    (name) => !isStreamFixture(name) && expectedUsage(name).status < 300,
  );
  const messagesStreams = fixtureNames('prov-a').filter(
    (name) => isStreamFixture(name) && expectedUsage(name).complete,
  );

  it.each(messagesJson)(
    'recorded message %s: chunks that assemble back into it, the last with Bedrock’s token counts',
    (name) => {
      const frames = synthesizeInvokeFrames(fixtureJson(name));
      const messages = decodeFrames(frames!);
      expect(assembleInvokeResponse(messages)).toEqual(fixtureJson(name));
      expect(messages.every((message) => message.eventType === 'chunk')).toBe(true);
      const last = JSON.parse(
        Buffer.from((JSON.parse(messages.at(-1)!.payload.toString()) as { bytes: string }).bytes, 'base64').toString(),
      ) as Record<string, unknown>;
      const u = (fixtureJson(name) as { usage: Record<string, number> }).usage;
      expect(last).toMatchObject({
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': { inputTokenCount: u.input_tokens, outputTokenCount: u.output_tokens },
      });
    },
  );

  it.each(messagesStreams)('recorded stream %s inside chunk events assembles as the Messages stream does', (name) => {
    const events = fixtureEvents(name).filter((e) => e.event !== 'ping');
    const frames = events.map((e, i) => {
      const data = JSON.parse(e.data) as Record<string, unknown>;
      return chunk(
        i === events.length - 1
          ? {
              ...data,
              'amazon-bedrock-invocationMetrics': {
                inputTokenCount: 1,
                outputTokenCount: 2,
                invocationLatency: 3,
                firstByteLatency: 4,
              },
            }
          : data,
      );
    });
    expect(assembleInvokeResponse(decodeFrames(frames))).toEqual(assembleMessagesResponse(fixtureEvents(name)));
  });

  it("another model family's body (Llama) is neither assembled nor turned into a stream", () => {
    expect(
      synthesizeInvokeFrames({
        generation: 'Hello',
        prompt_token_count: 5,
        generation_token_count: 1,
        stop_reason: 'stop',
      }),
    ).toBeUndefined();
    expect(
      assembleInvokeResponse(
        decodeFrames([
          chunk({ generation: 'Hello', prompt_token_count: 5, generation_token_count: 1, stop_reason: 'stop' }),
        ]),
      ),
    ).toBeUndefined();
  });

  it('a stream cut before message_stop, or with a delta type not folded here, is not assembled', () => {
    const start = chunk({
      type: 'message_start',
      message: {
        id: 'm',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'c',
        stop_reason: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    });
    expect(assembleInvokeResponse(decodeFrames([start]))).toBeUndefined();
    const odd = chunk({ type: 'content_block_delta', index: 0, delta: { type: 'brand_new_delta', x: 1 } });
    expect(assembleInvokeResponse(decodeFrames([start, odd, chunk({ type: 'message_stop' })]))).toBeUndefined();
  });
});

describe('replayCached for Bedrock entries', () => {
  const entry = (format: CachedResponse['format'], body: string, contentType: string): CachedResponse => ({
    format,
    status: 200,
    contentType,
    body,
    usage: NO_USAGE,
    costNanos: 0,
    storedAt: 0,
  });
  const request = (stream: boolean, dialect = converseDialect): ReplayRequest => ({
    dialect,
    stream,
    hideAddedUsage: false,
    clientAskedForUsage: true,
  });
  const read = async (body: Readable) => {
    const parts: Buffer[] = [];
    for await (const part of body) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(String(part)));
    return parts;
  };
  const json = JSON.stringify(converseAnswers.text);
  const frames = synthesizeConverseFrames(converseAnswers.text)!;
  const stored = frames.map((frame) => `${frame.toString('base64')}\n`).join('');

  it('each form as stored: the JSON text, or the frames byte for byte', async () => {
    const asJson = replayCached(entry('json', json, 'application/json'), request(false))!;
    expect(Buffer.concat(await read(asJson.body)).toString()).toBe(json);
    const asStream = replayCached(entry('eventstream', stored, 'application/vnd.amazon.eventstream'), request(true))!;
    expect(await read(asStream.body)).toEqual(frames);
  });

  it('each form as the other: one frame per chunk, or one JSON body', async () => {
    const asStream = replayCached(entry('json', json, 'application/json'), request(true))!;
    expect(asStream.contentType).toBe('application/vnd.amazon.eventstream');
    expect(assembleConverseResponse(decodeFrames(await read(asStream.body)))).toEqual(converseAnswers.text);
    const asJson = replayCached(entry('eventstream', stored, 'application/vnd.amazon.eventstream'), request(false))!;
    expect(asJson.contentType).toBe('application/json');
    expect(JSON.parse(Buffer.concat(await read(asJson.body)).toString())).toEqual(converseAnswers.text);
  });

  it('nothing when the answer does not convert exactly, or the stored stream is damaged', () => {
    const llama = JSON.stringify({
      generation: 'Hi',
      prompt_token_count: 1,
      generation_token_count: 1,
      stop_reason: 'stop',
    });
    expect(replayCached(entry('json', llama, 'application/json'), request(true, invokeDialect))).toBeUndefined();
    const damaged = Buffer.concat(frames).subarray(0, -3).toString('base64');
    expect(
      replayCached(entry('eventstream', damaged, 'application/vnd.amazon.eventstream'), request(false)),
    ).toBeUndefined();
  });

  it('an SSE dialect never replays a stored event stream', () => {
    expect(
      replayCached(entry('eventstream', stored, 'application/vnd.amazon.eventstream'), request(true, messagesDialect)),
    ).toBeUndefined();
  });
});
