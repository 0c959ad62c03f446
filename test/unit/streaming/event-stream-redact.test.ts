/**
 * Credentials in an AWS event stream (SECURITY.md, "Keys"): cut out of each frame's payload and of the
 * base64 `bytes` a `chunk` event carries, with every frame still whole (length and CRCs valid);
 * frames without one pass on byte for byte; a stream that stops being frames is cut there, with the
 * proxy's own exception frame.
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { EventStreamDecoder, encodeEventStreamMessage } from '../../../lambda/eventstream/event-stream-decoder';
import { EventStreamRedactor } from '../../../lambda/streaming/event-stream-redact';

const KEY = 'ABSKQmVkcm9ja0FQSUtleS1hYmNkZWZnaGlqa2xtbm9w';
const TOKEN = 'sk-proxy-acc1_key1_s3cr3tS3cr3tS3cr3t';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

const clean = encodeEventStreamMessage({ event: 'messageStart' }, { role: 'assistant' });
const frames = [
  clean,
  encodeEventStreamMessage(
    { event: 'contentBlockDelta' },
    { contentBlockIndex: 0, delta: { text: `your key is ${KEY} and token ${TOKEN}` } },
  ),
  encodeEventStreamMessage(
    { event: 'chunk' },
    {
      bytes: b64({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `echo ${KEY}` } }),
      p: 'abc',
    },
  ),
  encodeEventStreamMessage({ exception: 'validationException' }, { message: `bad token ${TOKEN}` }),
];
const all = Buffer.concat(frames);

function run(input: Buffer, size: number): Buffer {
  const redactor = new EventStreamRedactor([KEY, TOKEN, undefined], (problem) =>
    encodeEventStreamMessage({ exception: 'internalServerException' }, { message: problem }),
  );
  const out: Buffer[] = [];
  for (let at = 0; at < input.length; at += size) out.push(redactor.write(input.subarray(at, at + size)));
  out.push(redactor.end());
  return Buffer.concat(out);
}

/** Every payload as text, with the base64 `bytes` inside chunk events decoded. */
function readable(bytes: Buffer): { texts: string[]; problem?: string } {
  const decoder = new EventStreamDecoder();
  const messages = decoder.push(bytes);
  decoder.end();
  const texts = messages.map((m) => {
    const payload = JSON.parse(m.payload.toString('utf8')) as { bytes?: string };
    return payload.bytes ? Buffer.from(payload.bytes, 'base64').toString('utf8') : JSON.stringify(payload);
  });
  return { texts, problem: decoder.problem };
}

describe('EventStreamRedactor', () => {
  it.each([1, 7, 64, all.length])(
    'cut into %i-byte chunks: whole frames, no credential in any payload or base64 inside one',
    (size) => {
      const out = run(all, size);
      const { texts, problem } = readable(out);
      expect(problem).toBeUndefined();
      expect(texts).toHaveLength(4);
      const joined = texts.join('\n') + out.toString('latin1');
      expect(joined).not.toContain(KEY);
      expect(joined).not.toContain(TOKEN);
      expect(texts.join('\n').split('[redacted]').length - 1).toBe(4);
      expect(texts[2]).toContain('"text":"echo [redacted]"');
      // A frame without a credential is passed on unchanged.
      expect(out.subarray(0, clean.length)).toEqual(clean);
    },
  );

  it('passes a stream without credentials on byte for byte', () => {
    const plain = Buffer.concat([
      clean,
      encodeEventStreamMessage({ event: 'metadata' }, { usage: { inputTokens: 1 } }),
    ]);
    expect(run(plain, 5)).toEqual(plain);
  });

  it.each([
    [
      'a damaged CRC',
      1,
      (() => {
        const damaged = Buffer.from(all);
        damaged[frames[0].length + 10] ^= 0xff;
        return damaged;
      })(),
    ],
    ['a frame cut short', 3, all.subarray(0, all.length - 3)],
  ] as const)(
    'a stream that stops being frames (%s) is cut there and closed with an exception frame',
    (_name, readFrames, input) => {
      const out = run(input, 9);
      const decoder = new EventStreamDecoder();
      const messages = decoder.push(out);
      decoder.end();
      expect(decoder.problem).toBeUndefined();
      expect(messages.map((m) => m.frame)).toEqual([
        ...frames.slice(0, readFrames).map((f, i) => (i === 0 ? f : expect.any(Buffer))),
        expect.any(Buffer),
      ]);
      expect(messages.at(-1)!.exceptionType).toBe('internalServerException');
      expect(messages.at(-1)!.payload.toString()).toMatch(/could not be read/);
      expect(out.length).toBeLessThan(input.length);
    },
  );

  it('cuts a credential out of a header too (a string value, a byte value, a name), the frame whole and its payload kept', () => {
    const codec = new EventStreamCodec(
      (bytes) => Buffer.from(bytes).toString('utf8'),
      (text) => Buffer.from(text, 'utf8'),
    );
    const headers: MessageHeaders = {
      ':event-type': { type: 'string', value: 'metadata' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
      'x-echo': { type: 'string', value: `key=${KEY}` },
      'x-echo-bytes': { type: 'binary', value: Buffer.from(`token ${TOKEN}`) },
      [`x-${TOKEN}`]: { type: 'integer', value: 7 },
      'x-count': { type: 'integer', value: 3 },
    };
    const payload = Buffer.from('{"usage":{"inputTokens":1}}');
    const echoing = Buffer.from(codec.encode({ headers, body: payload }));
    for (const size of [1, 13, echoing.length]) {
      const out = run(Buffer.concat([clean, echoing]), size);
      expect(out.toString('latin1')).not.toContain(KEY);
      expect(out.toString('latin1')).not.toContain(TOKEN);
      const decoded = new EventStreamDecoder().push(out);
      expect(decoded.map((m) => m.eventType)).toEqual(['messageStart', 'metadata']);
      const second = codec.decode(decoded[1]!.frame);
      expect(Buffer.from(second.body).equals(payload)).toBe(true);
      expect(second.headers['x-echo']).toEqual({ type: 'string', value: 'key=[redacted]' });
      expect(Buffer.from(second.headers['x-echo-bytes']!.value as Uint8Array).toString()).toBe('token [redacted]');
      expect(second.headers['x-[redacted]']).toEqual({ type: 'integer', value: 7 });
      expect(second.headers['x-count']).toEqual({ type: 'integer', value: 3 });
    }
  });
});
