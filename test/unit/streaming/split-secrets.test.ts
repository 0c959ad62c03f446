/**
 * Credentials a client would put back together (SECURITY.md, "Split and escaped credentials"): the
 * byte redactor's JSON-escaped spellings, and the split-secret guard behind the SSE redactor — what
 * it holds back, and that everything else passes in the same write.
 */
import { SecretRedactor } from '../../../lambda/streaming/redact';
import { SseRedactor } from '../../../lambda/streaming/sse-redact';
import { MAX_HELD_BYTES } from '../../../lambda/streaming/split-secrets';
import { seededRandom } from '../../fakes/behaviour';

const KEY = 'sk-live-0123456789/abcdefghij';

function inPieces(redactor: { write(b: Buffer): Buffer; end(): Buffer }, text: string, random: () => number): string {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(random() * 30);
    out.push(redactor.write(bytes.subarray(at, at + size)));
    at += size;
  }
  out.push(redactor.end());
  return Buffer.concat(out).toString();
}

describe('SecretRedactor: JSON-escaped spellings', () => {
  const spellings = [
    KEY.replace('-', '\\u002d'),
    KEY.replace(/-/g, '\\u002D'),
    KEY.replace('/', '\\/'),
    [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  ];
  const text = `{"message":"${spellings.join(' and ')} but not sk\\u002dlive nor \\n\\t\\\\ or \\u0041"}`;
  const expected = `{"message":"${spellings.map(() => '[redacted]').join(' and ')} but not sk\\u002dlive nor \\n\\t\\\\ or \\u0041"}`;

  it.each([1, 2, 3, 4, 5, 6])('each escaped spelling is replaced, whatever the chunking (seed %i)', (seed) => {
    expect(inPieces(new SecretRedactor([KEY]), text, seededRandom(seed))).toBe(expected);
    expect(JSON.parse(expected)).toBeDefined();
  });
});

const delta = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe('SseRedactor', () => {
  it('a credential spread one character per delta is replaced in the joined text', () => {
    for (const seed of [1, 2, 3]) {
      const stream = [...`key ${KEY}!`].map(delta).join('') + 'data: [DONE]\n\n';
      const out = inPieces(new SseRedactor([KEY]), stream, seededRandom(seed));
      const joined = out
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map(
          (event) =>
            (JSON.parse(event.slice(6)) as { choices: [{ delta: { content: string } }] }).choices[0].delta.content,
        )
        .join('');
      // The first three characters go on before the fourth shows they begin the credential (HOLD_FROM_CHARACTERS).
      expect(joined).toBe('key sk-[redacted]!');
      expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
    }
  });

  it('an event whose delta cannot begin a credential passes in the same write; one ending in a credential’s first characters waits for the next', () => {
    const redactor = new SseRedactor([KEY]);
    const plain = delta('hello there');
    expect(redactor.write(Buffer.from(plain)).toString()).toBe(plain);
    const teasing = delta('ask-liv');
    expect(redactor.write(Buffer.from(teasing)).length).toBe(0);
    const after = delta('ely one');
    expect(redactor.write(Buffer.from(after)).toString()).toBe(teasing + after);
    // Ids and other repeated strings are not joined: an id that could begin a credential holds nothing.
    const id = `data: ${JSON.stringify({ id: 'sk-li', choices: [{ delta: { content: 'x' } }] })}\n\n`;
    expect(redactor.write(Buffer.from(id)).toString()).toBe(id);
  });

  it('holds at most MAX_HELD_BYTES: a stream cannot make it keep everything', () => {
    const redactor = new SseRedactor([KEY]);
    expect(redactor.write(Buffer.from(delta('sk-li'))).length).toBe(0);
    const filler = `data: ${JSON.stringify({ pad: 'x'.repeat(1000) })}\n\n`;
    let passed = 0;
    for (let i = 0; i * filler.length <= MAX_HELD_BYTES + filler.length; i++)
      passed += redactor.write(Buffer.from(filler)).length;
    expect(passed).toBeGreaterThan(MAX_HELD_BYTES);
  });
});
