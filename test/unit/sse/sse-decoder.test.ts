import { SseDecoder } from '../../../lambda/sse/sse-decoder';
import { fixtureNames, fixtureText, isStreamFixture } from '../../fixtures';
import {
  awkwardOffsets,
  cutAt,
  decodeAll,
  eventKey,
  oneBytePieces,
  randomCuts,
  seededRandom,
  streamVariants,
  UNICODE_SAMPLE,
} from '../../support/fragments';

const streams = fixtureNames().filter(isStreamFixture);
const cases = streams.flatMap((name) =>
  streamVariants(fixtureText(name)).map((variant) => ({ name: `${name} (${variant.label})`, variant })),
);

describe('SseDecoder over every fixture stream', () => {
  it('has every fixture stream, in four line-ending / text variants', () => {
    expect(streams.length).toBeGreaterThanOrEqual(16);
    const unicode = cases.filter((c) => c.variant.label === 'unicode+CRLF');
    for (const { variant } of unicode) {
      // The variant must really contain what the splits are meant to land inside.
      expect(variant.text).toContain('\r\n');
      expect(Buffer.byteLength(variant.text)).toBeGreaterThan(variant.text.length);
      expect(variant.text).toContain(UNICODE_SAMPLE);
    }
  });

  it.each(cases)('$name: whole text decodes to the framed blocks, raw covering every byte', ({ variant }) => {
    const events = decodeAll([variant.text]);
    expect(events).toEqual(variant.expected);
    expect(events.map((e) => e.raw).join('')).toBe(variant.text);
  });

  // A seeded sample of cut points (beside line breaks, inside characters, anywhere), not every offset:
  // the same cuts every run, and the one-byte-at-a-time case below covers every boundary at once.
  it.each(cases)('$name: a single split at a sampled awkward offset gives the same events', ({ variant }) => {
    const bytes = Buffer.from(variant.text, 'utf8');
    const expected = eventKey(variant.expected);
    const wrongAt: number[] = [];
    for (const offset of awkwardOffsets(bytes, seededRandom(bytes.length))) {
      const events = decodeAll(cutAt(bytes, [offset]));
      if (eventKey(events) !== expected || events.map((e) => e.raw).join('') !== variant.text) wrongAt.push(offset);
    }
    expect(wrongAt).toEqual([]);
  });

  it.each(cases)('$name: random multi-splits (seeded) and one byte at a time give the same events', ({ variant }) => {
    const bytes = Buffer.from(variant.text, 'utf8');
    const expected = eventKey(variant.expected);
    const wrongSeeds: number[] = [];
    for (let seed = 1; seed <= 80; seed++) {
      const events = decodeAll(randomCuts(bytes, seededRandom(seed)));
      if (eventKey(events) !== expected) wrongSeeds.push(seed);
    }
    expect(wrongSeeds).toEqual([]);
    const byteByByte = decodeAll(oneBytePieces(bytes));
    expect(eventKey(byteByByte)).toBe(expected);
    expect(Buffer.from(byteByByte.map((e) => e.raw).join(''), 'utf8').equals(bytes)).toBe(true);
  });
});

describe('SseDecoder framing rules', () => {
  const table: { title: string; input: string[]; events: { event?: string; data: string; raw: string }[] }[] = [
    {
      title: 'a comment is its own event with empty data, kept in raw',
      input: [': ping\n\ndata: {"a":1}\n\n'],
      events: [
        { data: '', raw: ': ping\n\n' },
        { data: '{"a":1}', raw: 'data: {"a":1}\n\n' },
      ],
    },
    {
      title: 'a comment line inside an event is skipped but stays in raw',
      input: ['event: x\n: note\ndata: y\n\n'],
      events: [{ event: 'x', data: 'y', raw: 'event: x\n: note\ndata: y\n\n' }],
    },
    {
      title: 'multi-line data joins with \\n',
      input: ['data: first\ndata: second\ndata: third\n\n'],
      events: [{ data: 'first\nsecond\nthird', raw: 'data: first\ndata: second\ndata: third\n\n' }],
    },
    {
      title: '[DONE] is plain data',
      input: ['data: [DONE]\n\n'],
      events: [{ data: '[DONE]', raw: 'data: [DONE]\n\n' }],
    },
    {
      title: 'only one leading space is removed; no space and bare field names work',
      input: ['data:x\n\n', 'data:  two\n\n', 'data\n\n', 'event:ping\ndata:\n\n'],
      events: [
        { data: 'x', raw: 'data:x\n\n' },
        { data: ' two', raw: 'data:  two\n\n' },
        { data: '', raw: 'data\n\n' },
        { event: 'ping', data: '', raw: 'event:ping\ndata:\n\n' },
      ],
    },
    {
      title: 'id, retry and unknown fields are ignored but kept in raw',
      input: ['id: 7\nretry: 1000\nfoo: bar\ndata: z\n\n'],
      events: [{ data: 'z', raw: 'id: 7\nretry: 1000\nfoo: bar\ndata: z\n\n' }],
    },
    {
      title: 'extra blank lines become empty events so no byte is lost',
      input: ['\n\ndata: a\n\n\n'],
      events: [
        { data: '', raw: '\n' },
        { data: '', raw: '\n' },
        { data: 'a', raw: 'data: a\n\n' },
        { data: '', raw: '\n' },
      ],
    },
    {
      title: 'a CR at the end of a chunk waits for a possible LF',
      input: ['data: a\r', '\n\r', '\n'],
      events: [{ data: 'a', raw: 'data: a\r\n\r\n' }],
    },
    {
      title: 'mixed line endings in one stream',
      input: ['data: a\r\n\ndata: b\n\r\ndata: c\r\r'],
      events: [
        { data: 'a', raw: 'data: a\r\n\n' },
        { data: 'b', raw: 'data: b\n\r\n' },
        { data: 'c', raw: 'data: c\r\r' },
      ],
    },
  ];

  it.each(table)('$title', ({ input, events }) => {
    expect(decodeAll(input)).toEqual(events.map((e) => ({ event: e.event, ...e })));
  });

  it('a final event without its blank line is held until end() flushes it', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('data: {"n":1}\n\ndata: tail')).toEqual([
      { event: undefined, data: '{"n":1}', raw: 'data: {"n":1}\n\n' },
    ]);
    expect(decoder.buffered).toBe('data: tail');
    expect(decoder.push(' end')).toEqual([]);
    expect(decoder.end()).toEqual([{ event: undefined, data: 'tail end', raw: 'data: tail end' }]);
    expect(decoder.buffered).toBe('');
  });

  it('end() flushes an event ended by a single newline, and a trailing CR', () => {
    expect(decodeAll(['event: message_stop\ndata: {}\n'])).toEqual([
      { event: 'message_stop', data: '{}', raw: 'event: message_stop\ndata: {}\n' },
    ]);
    expect(decodeAll(['data: [DONE]\r'])).toEqual([{ event: undefined, data: '[DONE]', raw: 'data: [DONE]\r' }]);
  });

  it('end() on an empty stream yields nothing', () => {
    expect(decodeAll([])).toEqual([]);
    expect(decodeAll([new Uint8Array(0), ''])).toEqual([]);
  });

  it('a multi-byte character split across chunks is not corrupted', () => {
    const bytes = Buffer.from('data: 😀é\n\n', 'utf8');
    const emojiStart = bytes.indexOf(0xf0);
    const pieces = cutAt(bytes, [emojiStart + 1, emojiStart + 2, emojiStart + 3, emojiStart + 5]);
    expect(decodeAll(pieces)).toEqual([{ event: undefined, data: '😀é', raw: 'data: 😀é\n\n' }]);
  });

  it('accepts strings and bytes mixed', () => {
    const events = decodeAll(['data: a', Buffer.from('\n\ndata: b\n'), '\n']);
    expect(events.map((e) => e.data)).toEqual(['a', 'b']);
  });

  // The tap re-emits `raw` when it hides an event, so every byte must survive decoding, a BOM included.
  it('a leading byte-order mark is kept in raw and does not break the first field', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: x\n\n')]);
    const events = decodeAll([bytes]);
    expect(events.map((e) => e.data)).toEqual(['x']);
    expect(Buffer.from(events.map((e) => e.raw).join(''), 'utf8').equals(bytes)).toBe(true);
  });
});
