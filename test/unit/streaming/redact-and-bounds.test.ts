/**
 * The redactor and the decoder's bound, on their own: whatever the chunking,
 * the output equals redacting (or framing) the whole text at once.
 */
import { SecretRedactor } from '../../../lambda/streaming/redact';
import { SseDecoder } from '../../../lambda/sse/sse-decoder';
import { seededRandom } from '../../fakes/behaviour';

const KEY = 'sk-live-0123456789abcdefghij';
const TOKEN = 'sk-proxy-abcdefghijklmnop_abcdefgh_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const SECRET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';

function redactInPieces(text: string, secrets: string[], random: () => number): { out: string; maxHeld: number } {
  const redactor = new SecretRedactor(secrets);
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  let fed = 0;
  let emitted = 0;
  let maxHeld = 0;
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(random() * 40);
    const piece = redactor.write(bytes.subarray(at, at + size));
    fed += Math.min(size, bytes.length - at);
    emitted += piece.length;
    out.push(piece);
    at += size;
    maxHeld = Math.max(maxHeld, fed - emitted);
  }
  out.push(redactor.end());
  return { out: Buffer.concat(out).toString(), maxHeld };
}

describe('SecretRedactor', () => {
  const text = `{"error":"bad key ${KEY}; token ${TOKEN}; secret ${SECRET}; partial sk-live-0123 and sk-proxy-; again ${KEY}${KEY}"}`;
  const expected = text.split(TOKEN).join('[redacted]').split(KEY).join('[redacted]').split(SECRET).join('[redacted]');

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('gives the same result for any chunking (seed %i)', (seed) => {
    expect(redactInPieces(text, [KEY, TOKEN, SECRET], seededRandom(seed)).out).toBe(expected);
  });

  it('holds back only what could still become a secret: less than the longest one', () => {
    const teasing = `sk-proxy-abc sk-live-0123456789 ABCDEFGHIJ sk-proxy-abcdefghijklmnop_abcdefgh_ABCDEF end`.repeat(
      20,
    );
    const { out, maxHeld } = redactInPieces(teasing, [KEY, TOKEN, SECRET], seededRandom(9));
    expect(out).toBe(teasing);
    expect(maxHeld).toBeLessThan(TOKEN.length);
  });

  it('replaces a whole token, not just its secret part, and passes text without secrets unchanged and at once', () => {
    const redactor = new SecretRedactor([TOKEN, SECRET]);
    expect(redactor.write(Buffer.from(`a ${TOKEN} b`)).toString()).toBe('a [redacted] b');
    // A chunk ending in ordinary text (an event's blank line) is not held back.
    const event = Buffer.from('data: {"x":1}\n\n');
    expect(redactor.write(event)).toEqual(event);
  });

  it('ignores values too short to be credentials', () => {
    const redactor = new SecretRedactor(['abc', undefined, '']);
    expect(redactor.active).toBe(false);
    expect(redactor.write(Buffer.from('abc abc')).toString()).toBe('abc abc');
  });
});

describe('SseDecoder bound', () => {
  it('passes an event over the bound on in pieces whose text is exactly the event, then frames the next events normally', () => {
    const decoder = new SseDecoder(100);
    const big = `data: ${'x'.repeat(1_000)}\n\n`;
    const after = 'data: {"usage":1}\n\n';
    const events = [];
    const text = big + after;
    for (let at = 0; at < text.length; at += 37) events.push(...decoder.push(text.slice(at, at + 37)));
    events.push(...decoder.end());
    expect(events.map((event) => event.raw).join('')).toBe(text);
    const pieces = events.filter((event) => event.oversized);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((piece) => piece.data === '')).toBe(true);
    expect(events.at(-1)).toEqual({ event: undefined, data: '{"usage":1}', raw: after });
    expect(decoder.oversizedEvents).toBe(1);
  });

  it('scans each character once: a 20 MB event arriving in 64 KB chunks holds at most the bound', () => {
    const decoder = new SseDecoder(1024 * 1024);
    const chunk = 'y'.repeat(64 * 1024);
    decoder.push('data: ');
    for (let i = 0; i < 320; i++) {
      decoder.push(chunk);
      expect(decoder.buffered.length).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
    }
    const events = decoder.push('\n\n');
    expect(events).toHaveLength(1);
    expect(events[0]!.oversized).toBe(true);
    expect(decoder.oversizedEvents).toBe(1);
  });
});
