import type { Transform } from 'node:stream';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { bodyDecoding } from '../../../lambda/upstream/content-encoding';

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
    ['gzip, br', brotliCompressSync(gzipSync(text))],
    ['deflate, identity, gzip', gzipSync(deflateSync(text))],
  ];
  it.each(cases)('%s decodes, whole or fed one byte at a time', async (header, bytes) => {
    const decoding = bodyDecoding(header);
    expect(decoding.kind).toBe('decode');
    if (decoding.kind !== 'decode') return;
    await expect(decodeInPieces(decoding.create(), bytes, bytes.length)).resolves.toBe(text);
    await expect(decodeInPieces(decoding.create(), bytes, 1)).resolves.toBe(text);
  });

  it('a coding it does not know: a stream that fails, naming it', async () => {
    const decoding = bodyDecoding('gzip, zstd');
    expect(decoding).toMatchObject({ kind: 'unsupported', coding: 'zstd' });
    await expect(decodeInPieces(decoding.kind === 'unsupported' ? decoding.create() : (undefined as never), Buffer.from('x'), 1)).rejects.toThrow(
      'unsupported content-encoding zstd',
    );
  });

  it('bytes that are not what the header says: the decoder fails', async () => {
    const decoding = bodyDecoding('gzip');
    if (decoding.kind !== 'decode') throw new Error('expected a decoder');
    await expect(decodeInPieces(decoding.create(), Buffer.from('{"plain":"json"}'), 4)).rejects.toThrow();
  });
});
