/**
 * The Bedrock continuations (docs/fallbacks.md, "A stream cut mid-answer") over AWS event streams:
 * the client's frames decide the prefill, and the continuation's frames are rebuilt so that the two
 * read as one stream whose every frame the maintained codec accepts (headers and both CRCs).
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { Readable, type Transform } from 'node:stream';
import { encodeEventStreamMessage } from '../../../lambda/eventstream/event-stream-decoder';
import { converseContinuer, invokeContinuer } from '../../../lambda/streaming/bedrock-splice';
import { RelayCut } from '../../../lambda/streaming/relay';

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);
type Frame = [type: string, payload: Record<string, unknown>];
const frame = ([type, payload]: Frame) => encodeEventStreamMessage({ event: type }, payload);
/** The tap's copy of frames: one base64 line each. */
const copied = (frames: Frame[]) => frames.map((f) => `${frame(f).toString('base64')}\n`).join('');

/** Every frame decoded by the maintained codec (which checks both CRCs). */
function decodeAll(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  for (let at = 0; at < bytes.length;) {
    const length = bytes.readUInt32BE(at);
    const { headers, body } = codec.decode(bytes.subarray(at, at + length));
    const type = headers[':event-type'] ?? headers[':exception-type'];
    frames.push([String(type?.value), JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>]);
    at += length;
  }
  return frames;
}

async function through(splice: Transform, frames: Frame[]): Promise<{ out: Frame[]; error?: Error }> {
  const bytes = Buffer.concat(frames.map(frame));
  // Cut into 11-byte pieces: frames split across chunks.
  const pieces = Array.from({ length: Math.ceil(bytes.length / 11) }, (_, i) => bytes.subarray(i * 11, i * 11 + 11));
  const out: Buffer[] = [];
  try {
    for await (const piece of Readable.from(pieces).pipe(splice)) out.push(piece as Buffer);
  } catch (error) {
    return { out: decodeAll(Buffer.concat(out)), error: error as Error };
  }
  return { out: decodeAll(Buffer.concat(out)) };
}

const asked = { messages: [{ role: 'user', content: [{ text: 'Hello' }] }] };
const body = () => Buffer.from(JSON.stringify(asked));
const delta = (text: string, contentBlockIndex = 0): Frame => [
  'contentBlockDelta',
  { contentBlockIndex, delta: { text } },
];
const converse = (...texts: string[]): Frame[] => [
  ['messageStart', { role: 'assistant' }],
  ...texts.map((text) => delta(text)),
  ['contentBlockStop', { contentBlockIndex: 0 }],
  ['messageStop', { stopReason: 'end_turn' }],
  ['metadata', { usage: { inputTokens: 40, outputTokens: 30, totalTokens: 70 } }],
];

describe('converseContinuer', () => {
  it('a stream cut in its text: the text as the assistant message; the continuation joined into block 0', async () => {
    const continuer = converseContinuer(asked);
    continuer.append(copied(converse('Hello', '! How can ').slice(0, 3)));
    expect(continuer.unsound()).toBeUndefined();
    const sent = JSON.parse(continuer.prefill(body()).toString()) as { messages: unknown[] };
    // Trailing white space is left out of the prefill, and out of what the continuation repeats of it.
    expect(sent.messages.at(-1)).toEqual({ role: 'assistant', content: [{ text: 'Hello! How can' }] });
    const { out, error } = await through(continuer.splice('cut'), converse(' I', ' help'));
    expect(error).toBeUndefined();
    expect(out).toEqual([
      delta('I'),
      delta(' help'),
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['messageStop', { stopReason: 'end_turn' }],
      ['metadata', { usage: { inputTokens: 40, outputTokens: 30, totalTokens: 70 } }],
    ]);
  });

  it('a tool call begun, an ended answer: not continued; a continuation that starts a tool call in the open block fails', async () => {
    const tool = converseContinuer(asked);
    tool.append(
      copied([
        ['messageStart', {}],
        ['contentBlockStart', { contentBlockIndex: 0, start: { toolUse: {} } }],
      ]),
    );
    expect(tool.unsound()).toMatch(/toolUse block/);
    const ended = converseContinuer(asked);
    ended.append(copied(converse('Hi').slice(0, 4)));
    expect(ended.unsound()).toMatch(/already ended/);

    const open = converseContinuer(asked);
    open.append(copied(converse('Hello').slice(0, 2)));
    const { error, out } = await through(open.splice('cut'), [
      ['messageStart', {}],
      ['contentBlockStart', { contentBlockIndex: 0, start: { toolUse: {} } }],
    ]);
    expect(error).toBeInstanceOf(RelayCut);
    expect(out).toEqual([]);
  });

  it('an exception frame of the continuation passes as it came', async () => {
    const continuer = converseContinuer(asked);
    continuer.append(copied(converse('Hello').slice(0, 2)));
    const exception = encodeEventStreamMessage({ exception: 'throttlingException' }, { message: 'slow down' });
    const out: Buffer[] = [];
    const splice = continuer.splice('cut');
    for await (const piece of Readable.from([frame(['messageStart', {}]), exception]).pipe(splice))
      out.push(piece as Buffer);
    expect(Buffer.concat(out).equals(exception)).toBe(true);
  });
});

describe('invokeContinuer', () => {
  const chunk = (event: Record<string, unknown>): Frame => [
    'chunk',
    { bytes: Buffer.from(JSON.stringify(event)).toString('base64') },
  ];
  const anthropic = (...texts: string[]) => [
    { type: 'message_start', message: { role: 'assistant', usage: { input_tokens: 40, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...texts.map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30 } },
    { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 40, outputTokenCount: 30 } },
  ];
  const events = (frames: Frame[]) =>
    frames.map(([, payload]) => JSON.parse(Buffer.from(String(payload.bytes), 'base64').toString('utf8')) as unknown);

  it('Anthropic chunks: the prefill is Anthropic’s; the continuation’s chunks joined and re-encoded', async () => {
    const continuer = invokeContinuer({ messages: [{ role: 'user', content: 'Hello' }] });
    continuer.append(copied(anthropic('Hello', '! How').slice(0, 4).map(chunk)));
    const sent = JSON.parse(
      continuer.prefill(Buffer.from('{"messages":[{"role":"user","content":"Hello"}]}')).toString(),
    ) as {
      messages: unknown[];
    };
    expect(sent.messages.at(-1)).toEqual({ role: 'assistant', content: 'Hello! How' });
    const { out, error } = await through(continuer.splice('cut'), anthropic(' can', ' I').map(chunk));
    expect(error).toBeUndefined();
    expect(out.every(([type]) => type === 'chunk')).toBe(true);
    expect(events(out)).toEqual([
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' can' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' I' } },
      { type: 'content_block_stop', index: 0 },
      // The continuation's whole usage in its one message_delta.
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 40, output_tokens: 30 } },
      { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 40, outputTokenCount: 30 } },
    ]);
  });

  it('another model family’s chunks are not continued', () => {
    const continuer = invokeContinuer({ messages: [] });
    continuer.append(copied([['chunk', { bytes: Buffer.from('{"generation":"Hi"}').toString('base64') }]]));
    expect(continuer.unsound()).toBeDefined();
  });
});
