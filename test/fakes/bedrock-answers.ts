/**
 * What the fake Bedrock answers (fake-bedrock.ts): the JSON bodies of Converse and InvokeModel, and
 * the event-stream frames of their streaming forms, made by the maintained codec, with the usage
 * each reports and the token-count headers.
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';

export interface BedrockUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const DEFAULT_BEDROCK_USAGE: BedrockUsage = { input: 25, output: 11, cacheRead: 1536, cacheWrite: 128 };
export const BEDROCK_TEXT = ['Hello', '! How can', ' I help you', ' today?'];

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);
const str = (value: string) => ({ type: 'string' as const, value });
const padding = () =>
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123'.slice(0, 1 + Math.floor(Math.random() * 30));

function eventFrame(eventType: string, payload: unknown): Buffer {
  const headers: MessageHeaders = {
    ':event-type': str(eventType),
    ':content-type': str('application/json'),
    ':message-type': str('event'),
  };
  return Buffer.from(codec.encode({ headers, body: Buffer.from(JSON.stringify(payload)) }));
}

export function exceptionFrame(type: string, message: string): Buffer {
  const headers: MessageHeaders = {
    ':exception-type': str(type),
    ':content-type': str('application/json'),
    ':message-type': str('exception'),
  };
  return Buffer.from(codec.encode({ headers, body: Buffer.from(JSON.stringify({ message })) }));
}

const chunkFrame = (event: unknown) =>
  eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: padding() });

function converseUsage(u: BedrockUsage) {
  return {
    cacheReadInputTokens: u.cacheRead,
    cacheWriteInputTokens: u.cacheWrite,
    inputTokens: u.input,
    outputTokens: u.output,
    totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
  };
}

/** The token-count headers; the prompt-cache ones only for a model family that has a prompt cache. */
export function tokenHeaders(u: BedrockUsage, withCache: boolean): Record<string, string> {
  return {
    'x-amzn-bedrock-input-token-count': String(u.input),
    'x-amzn-bedrock-output-token-count': String(u.output),
    ...(withCache
      ? {
          'x-amzn-bedrock-cache-read-input-token-count': String(u.cacheRead),
          'x-amzn-bedrock-cache-write-input-token-count': String(u.cacheWrite),
        }
      : {}),
    'x-amzn-bedrock-invocation-latency': '412',
  };
}

export const isAnthropic = (model: string) => model.includes('anthropic.');

function anthropicMessage(u: BedrockUsage) {
  return {
    id: 'msg_bdrk_01Lr8XJYjqzaYVFoqJ2xMVmq',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content: [{ type: 'text', text: BEDROCK_TEXT.join('') }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: u.input,
      cache_creation_input_tokens: u.cacheWrite,
      cache_read_input_tokens: u.cacheRead,
      output_tokens: u.output,
    },
  };
}

function metrics(u: BedrockUsage, withCache: boolean) {
  return {
    inputTokenCount: u.input,
    outputTokenCount: u.output,
    invocationLatency: 412,
    firstByteLatency: 230,
    ...(withCache ? { cacheReadInputTokenCount: u.cacheRead, cacheWriteInputTokenCount: u.cacheWrite } : {}),
  };
}

/** The frames of each streaming operation, usage as configured. */
export function streamFrames(operation: string, model: string, u: BedrockUsage, toolUse = false): Buffer[] {
  if (operation === 'converse-stream' && toolUse) {
    const toolUseId = 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q';
    return [
      eventFrame('messageStart', { p: padding(), role: 'assistant' }),
      eventFrame('contentBlockStart', {
        contentBlockIndex: 0,
        p: padding(),
        start: { toolUse: { name: 'lookup_order', toolUseId } },
      }),
      ...['{"order_id":', ' "A-10442"}'].map((input) =>
        eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input } }, p: padding() }),
      ),
      eventFrame('contentBlockStop', { contentBlockIndex: 0, p: padding() }),
      eventFrame('messageStop', { p: padding(), stopReason: 'tool_use' }),
      eventFrame('metadata', { metrics: { latencyMs: 412 }, p: padding(), usage: converseUsage(u) }),
    ];
  }
  if (operation === 'converse-stream') {
    return [
      eventFrame('messageStart', { p: padding(), role: 'assistant' }),
      ...BEDROCK_TEXT.map((text) =>
        eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text }, p: padding() }),
      ),
      eventFrame('contentBlockStop', { contentBlockIndex: 0, p: padding() }),
      eventFrame('messageStop', { p: padding(), stopReason: 'end_turn' }),
      eventFrame('metadata', { metrics: { latencyMs: 412 }, p: padding(), usage: converseUsage(u) }),
    ];
  }
  if (isAnthropic(model)) {
    const { content: _content, stop_reason: _stop, usage, ...message } = anthropicMessage(u);
    return [
      chunkFrame({
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      }),
      chunkFrame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ...BEDROCK_TEXT.map((text) =>
        chunkFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      ),
      chunkFrame({ type: 'content_block_stop', index: 0 }),
      chunkFrame({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: u.output },
      }),
      chunkFrame({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': metrics(u, true) }),
    ];
  }
  // Meta's Llama: its own chunks, counts in the last one's invocation metrics only.
  return BEDROCK_TEXT.map((generation, i) =>
    chunkFrame({
      generation,
      prompt_token_count: i === 0 ? u.input : null,
      generation_token_count: i + 1,
      stop_reason: i === BEDROCK_TEXT.length - 1 ? 'stop' : null,
      ...(i === BEDROCK_TEXT.length - 1 ? { 'amazon-bedrock-invocationMetrics': metrics(u, false) } : {}),
    }),
  );
}

export function jsonBody(operation: string, model: string, u: BedrockUsage): unknown {
  if (operation === 'converse') {
    return {
      metrics: { latencyMs: 412 },
      output: { message: { content: [{ text: BEDROCK_TEXT.join('') }], role: 'assistant' } },
      stopReason: 'end_turn',
      usage: converseUsage(u),
    };
  }
  if (isAnthropic(model)) return anthropicMessage(u);
  return {
    generation: BEDROCK_TEXT.join(''),
    prompt_token_count: u.input,
    generation_token_count: u.output,
    stop_reason: 'stop',
  };
}
