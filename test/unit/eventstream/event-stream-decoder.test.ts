/**
 * The event-stream frames the proxy reads and writes, through @smithy/core's event-streams codec (the
 * copy the AWS SDK clients use): frames split anywhere across chunks, CRC checks, and frames the
 * proxy encodes itself read back by the AWS SDK's own unmarshaller.
 */
import { EventStreamMarshaller } from '@smithy/core/event-streams';
import { Readable } from 'node:stream';
import { EventStreamDecoder, encodeEventStreamMessage } from '../../../lambda/eventstream/event-stream-decoder';

const frames = [
  encodeEventStreamMessage({ event: 'messageStart' }, { role: 'assistant' }),
  encodeEventStreamMessage({ event: 'contentBlockDelta' }, { contentBlockIndex: 0, delta: { text: 'Héllo 👋' } }),
  encodeEventStreamMessage({ exception: 'throttlingException' }, { message: 'slow down' }),
];
const all = Buffer.concat(frames);

describe('EventStreamDecoder', () => {
  it('reads the same messages wherever the chunks cut the frames, down to one byte at a time', () => {
    for (const size of [1, 3, 16, 17, all.length]) {
      const decoder = new EventStreamDecoder();
      const read = [];
      for (let at = 0; at < all.length; at += size) read.push(...decoder.push(all.subarray(at, at + size)));
      decoder.end();
      expect(decoder.problem).toBeUndefined();
      expect(
        read.map((m) => [
          m.messageType,
          m.eventType,
          m.exceptionType,
          JSON.parse(m.payload.toString('utf8')) as unknown,
        ]),
      ).toEqual([
        ['event', 'messageStart', undefined, { role: 'assistant' }],
        ['event', 'contentBlockDelta', undefined, { contentBlockIndex: 0, delta: { text: 'Héllo 👋' } }],
        ['exception', undefined, 'throttlingException', { message: 'slow down' }],
      ]);
      expect(Buffer.concat(read.map((m) => m.frame))).toEqual(all);
    }
  });

  it('stops reading at a frame whose CRC does not match, and at a stream that ends inside a frame', () => {
    const corrupt = Buffer.from(all);
    corrupt[frames[0].length + 20] ^= 0xff;
    const decoder = new EventStreamDecoder();
    expect(decoder.push(corrupt)).toHaveLength(1);
    expect(decoder.problem).toMatch(/unreadable event-stream frame/);

    const cut = new EventStreamDecoder();
    expect(cut.push(all.subarray(0, all.length - 1))).toHaveLength(2);
    cut.end();
    expect(cut.problem).toBe('the stream ended inside an event-stream frame');
  });

  it("writes frames the AWS SDK's unmarshaller reads as typed events", async () => {
    const toUtf8 = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
    const marshaller = new EventStreamMarshaller({
      utf8Encoder: toUtf8,
      utf8Decoder: (text: string) => Buffer.from(text, 'utf8'),
    });
    const twoEvents = Buffer.concat(frames.slice(0, 2));
    const body = Readable.from([twoEvents.subarray(0, 30), twoEvents.subarray(30)]);
    const events: unknown[] = [];
    const read = marshaller.deserialize(body, async (event) => {
      const [type, message] = Object.entries(event)[0]!;
      return { [type]: JSON.parse(toUtf8(message.body)) as unknown };
    });
    for await (const event of read) events.push(event);
    expect(events).toEqual([
      { messageStart: { role: 'assistant' } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Héllo 👋' } } },
    ]);
  });
});
