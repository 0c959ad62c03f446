/**
 * Helpers for feeding byte streams in awkward pieces. Randomness is seeded so a
 * failure names a seed that reproduces it.
 */
import { SseDecoder } from '../../lambda/sse/sse-decoder';
import type { SseEvent } from '../../lambda/sse/sse-event';
import { splitSseBlocks } from '../fixtures';

// The fakes' seeded generator (mulberry32) picks the cut points too.
export { seededRandom } from '../fakes/behaviour';

/** The bytes cut at the given offsets (duplicates and out-of-range offsets are ignored). */
export function cutAt(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const cuts = [...new Set(offsets)].filter((o) => o > 0 && o < bytes.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of cuts) {
    pieces.push(bytes.subarray(start, cut));
    start = cut;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

/** Between 1 and `maxCuts` random cut points. */
export function randomCuts(bytes: Buffer, random: () => number, maxCuts = 40): Buffer[] {
  const count = 1 + Math.floor(random() * maxCuts);
  const offsets = Array.from({ length: count }, () => 1 + Math.floor(random() * Math.max(1, bytes.length - 1)));
  return cutAt(bytes, offsets);
}

/**
 * A seeded sample of single cut points where a decoder is most likely to go wrong — beside a CR or
 * LF (a line or event break split in two), inside a multi-byte UTF-8 character — and anywhere at
 * all: `perKind` of each, instead of every offset of the text.
 */
export function awkwardOffsets(bytes: Buffer, random: () => number, perKind = 24): number[] {
  const breaks: number[] = [];
  const insideCharacters: number[] = [];
  for (let offset = 1; offset < bytes.length; offset++) {
    if (bytes[offset] === 0x0a || bytes[offset] === 0x0d || bytes[offset - 1] === 0x0a || bytes[offset - 1] === 0x0d)
      breaks.push(offset);
    // A continuation byte (10xxxxxx): the cut falls inside a character.
    if ((bytes[offset] & 0xc0) === 0x80) insideCharacters.push(offset);
  }
  const sample = (from: number[]) =>
    from.length <= perKind ? from : Array.from({ length: perKind }, () => from[Math.floor(random() * from.length)]);
  const anywhere = Array.from({ length: perKind }, () => 1 + Math.floor(random() * Math.max(1, bytes.length - 1)));
  return [...new Set([...sample(breaks), ...sample(insideCharacters), ...anywhere])].filter(
    (offset) => offset > 0 && offset < bytes.length,
  );
}

export function oneBytePieces(bytes: Buffer): Buffer[] {
  return Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
}

export function decodeAll(pieces: readonly (Uint8Array | string)[]): SseEvent[] {
  const decoder = new SseDecoder();
  const events = pieces.flatMap((piece) => decoder.push(piece));
  return [...events, ...decoder.end()];
}

/** Inserted into every text value of a fixture: 2-, 3- and 4-byte UTF-8 and a joined emoji sequence. */
export const UNICODE_SAMPLE = 'Grüße, café — naïve 日本語 😀👩‍👩‍👧 ';

/**
 * A fixture stream with accents and emoji in its text values and a comment line,
 * still valid JSON in every event (the insertions go at the start of string values).
 */
export function withUnicode(text: string): string {
  const inserted = text.replace(
    /"(text|content|thinking|partial_json|reasoning_content)":"/g,
    (match) => `${match}${UNICODE_SAMPLE}`,
  );
  return `: keep-alive ☕ ${UNICODE_SAMPLE}\n\n${inserted}`;
}

export const toCrlf = (text: string): string => text.replace(/\n/g, '\r\n');
export const toCr = (text: string): string => text.replace(/\n/g, '\r');

export interface StreamVariant {
  label: string;
  text: string;
  /** The events the variant must decode to, worked out without the decoder under test. */
  expected: SseEvent[];
}

/** The variants every fixture stream is decoded in: as recorded, CRLF, CR only, and unicode + CRLF. */
export function streamVariants(lfText: string): StreamVariant[] {
  const blocks = (text: string) =>
    splitSseBlocks(text).map((e): SseEvent => ({ event: e.event, data: e.data, raw: e.raw }));
  const unicode = withUnicode(lfText);
  const withEnding = (events: SseEvent[], ending: (s: string) => string) =>
    events.map((e) => ({ ...e, raw: ending(e.raw) }));
  return [
    { label: 'LF', text: lfText, expected: blocks(lfText) },
    { label: 'CRLF', text: toCrlf(lfText), expected: withEnding(blocks(lfText), toCrlf) },
    { label: 'CR', text: toCr(lfText), expected: withEnding(blocks(lfText), toCr) },
    { label: 'unicode+CRLF', text: toCrlf(unicode), expected: withEnding(blocks(unicode), toCrlf) },
  ];
}

/** A comparable form of decoded events (undefined `event` and a missing one are the same). */
export function eventKey(events: readonly SseEvent[]): string {
  return JSON.stringify(events.map((e) => [e.event ?? null, e.data, e.raw]));
}
