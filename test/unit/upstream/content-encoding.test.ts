import type { Transform } from 'node:stream';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { ACCEPTED_ENCODINGS, bodyDecoding } from '../../../lambda/upstream/content-encoding';

const text = `data: {"usage":{"prompt_tokens":12}} ü 😀\n\n`.repeat(50);

/** Feeds the bytes in pieces of `size` and collects the decoded text. */
function decodeInPieces(decoder: Transform, bytes: Buffer, size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    decoder.on('data', (chunk: Buffer) => out.push(chunk));
    decoder.on('end', () => resolve(Buffer.concat(out).toString('utf8')));
    decoder.on('error', reject);
    for (let i = 0; i < bytes.length; i += size) decoder.write(bytes.subarray(i, i + size));
    decoder.end();
  });
}

describe('bodyDecoding', () => {
  it.each([undefined, '', 'identity', ' Identity '])('%p needs no decoding', (header) => {
    expect(bodyDecoding(header).kind).toBe('identity');
  });

  const cases: Array<[string, Buffer]> = [
    ['gzip', gzipSync(text)],
    ['x-gzip', gzipSync(text)],
    ['GZIP', gzipSync(text)],
    ['deflate', deflateSync(text)],
    ['deflate', deflateRawSync(text)],
    ['br', brotliCompressSync(text)],
    ['zstd', zstdCompressSync(text)],
    ['gzip, br', brotliCompressSync(gzipSync(text))],
    ['zstd, gzip', gzipSync(zstdCompressSync(text))],
    ['deflate, identity, gzip', gzipSync(deflateSync(text))],
  ];
  it.each(cases)('%s decodes, whole or fed one byte at a time', async (header, bytes) => {
    const decoding = bodyDecoding(header);
    expect(decoding.kind).toBe('decode');
    if (decoding.kind !== 'decode') return;
    await expect(decodeInPieces(decoding.create(), bytes, bytes.length)).resolves.toBe(text);
    await expect(decodeInPieces(decoding.create(), bytes, 1)).resolves.toBe(text);
  });

  it('a coding it does not know is named', () => {
    expect(bodyDecoding('gzip, compress')).toEqual({ kind: 'unsupported', coding: 'compress' });
  });

  it('the proxy asks upstream for exactly the codings it decodes', () => {
    expect(ACCEPTED_ENCODINGS).toBe('gzip, deflate, br, zstd');
    for (const coding of ACCEPTED_ENCODINGS.split(', ')) expect(bodyDecoding(coding).kind).toBe('decode');
  });

  it('bytes that are not what the header says: the decoder fails', async () => {
    const decoding = bodyDecoding('gzip');
    if (decoding.kind !== 'decode') throw new Error('expected a decoder');
    await expect(decodeInPieces(decoding.create(), Buffer.from('{"plain":"json"}'), 4)).rejects.toThrow();
  });
});
