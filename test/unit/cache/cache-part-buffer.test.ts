import { createHash } from 'node:crypto';
import { PartBuffer } from '../../../lambda/cache/dynamodb/cache-part-buffer';

function collect(partBytes: number, chunks: string[]) {
  const buffer = new PartBuffer(partBytes);
  const parts = chunks.flatMap((chunk) => buffer.push(chunk));
  const end = buffer.finish();
  return { parts: [...parts, ...end.parts], rest: end.rest, sha256: end.sha256, totalBytes: end.totalBytes };
}

describe('PartBuffer', () => {
  it('cuts the UTF-8 bytes into exact parts and keeps the last one pending', () => {
    const { parts, rest, totalBytes } = collect(4, ['abcdefghij']);
    expect(parts.map((p) => p.toString())).toEqual(['abcd', 'efgh']);
    expect(rest.toString()).toBe('ij');
    expect(totalBytes).toBe(10);
  });

  it('keeps a body of exactly one part pending (it can be stored inline)', () => {
    const { parts, rest } = collect(4, ['ab', 'cd']);
    expect(parts).toEqual([]);
    expect(rest.toString()).toBe('abcd');
  });

  it('splits inside multi-byte characters, and the joined bytes decode to the original text', () => {
    const text = 'é€😀漢字 ✓'.repeat(50);
    const chunks = text.match(/[\s\S]{1,7}/g)!;
    const { parts, rest, sha256, totalBytes } = collect(5, chunks);
    const joined = Buffer.concat([...parts, rest]);
    expect(joined.toString('utf8')).toBe(text);
    expect(totalBytes).toBe(Buffer.byteLength(text));
    expect(sha256).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    expect(parts.every((p) => p.length === 5)).toBe(true);
  });

  it('keeps a surrogate pair split across two chunks as one character', () => {
    const emoji = '😀';
    const { rest } = collect(100, ['a' + emoji[0], emoji[1] + 'b']);
    expect(rest.toString('utf8')).toBe('a😀b');
  });

  it('an empty body has no parts and the hash of nothing', () => {
    const { parts, rest, sha256, totalBytes } = collect(4, []);
    expect(parts).toEqual([]);
    expect(rest.length).toBe(0);
    expect(totalBytes).toBe(0);
    expect(sha256).toBe(createHash('sha256').digest('hex'));
  });

  it('rejects a non-positive part size', () => {
    expect(() => new PartBuffer(0)).toThrow(RangeError);
  });
});
