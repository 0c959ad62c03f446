import { Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';

/**
 * The proxy asks providers only for the codings it can decode (`ACCEPTED_ENCODINGS`),
 * and every encoded body — success or error, JSON, stream or file, one coding or
 * several stacked — is decoded and goes through the same credential redaction as a
 * plain body before the client sees a byte. The client gets the identity bytes
 * (SECURITY.md, "Keys"); a coding this runtime cannot decode is
 * never passed on unread.
 */
export type BodyDecoding =
  | { kind: 'identity' }
  /** `create` makes a decoder: compressed bytes in, the body's bytes out. */
  | { kind: 'decode'; coding: string; create: () => Transform }
  /** A coding this runtime can't read: the body cannot be checked for credentials. */
  | { kind: 'unsupported'; coding: string };

type DecoderFactory = () => Transform;

const DECODERS: Record<string, DecoderFactory> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => new DeflateDecoder(),
  br: () => zlib.createBrotliDecompress(),
  // Node 22.15 and later; an older runtime neither asks for zstd nor reads it.
  ...(typeof zlib.createZstdDecompress === 'function' ? { zstd: () => zlib.createZstdDecompress() } : {}),
};

/** The upstream `accept-encoding`: exactly the codings the proxy decodes (never the client's list). */
export const ACCEPTED_ENCODINGS = Object.keys(DECODERS)
  .filter((coding) => coding !== 'x-gzip')
  .join(', ');

/** What `content-encoding` says about the body: nothing to do, how to decode it, or a coding this runtime can't read. */
export function bodyDecoding(header: string | string[] | undefined): BodyDecoding {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const codings = value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding && coding !== 'identity');
  if (codings.length === 0) return { kind: 'identity' };
  const unknown = codings.find((coding) => !DECODERS[coding]);
  if (unknown) return { kind: 'unsupported', coding: unknown };
  // Codings are listed in the order they were applied; decoding undoes them last first.
  const factories = codings.map((coding) => DECODERS[coding]).reverse();
  return { kind: 'decode', coding: codings.join(', '), create: () => chain(factories.map((create) => create())) };
}

function chain(decoders: Transform[]): Transform {
  return decoders.length === 1 ? decoders[0] : new Chain(decoders);
}

/** Several decoders as one stream: bytes in at the first, decoded bytes out of the last. */
class Chain extends Transform {
  private readonly first: Transform;
  private readonly last: Transform;

  constructor(decoders: Transform[]) {
    super();
    for (let i = 0; i < decoders.length - 1; i++) decoders[i].pipe(decoders[i + 1]);
    this.first = decoders[0]!;
    this.last = decoders[decoders.length - 1]!;
    this.last.on('data', (chunk: Buffer) => this.push(chunk));
    for (const decoder of decoders) decoder.on('error', (error) => this.destroy(error));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.first.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    this.last.once('end', () => done());
    this.first.end();
  }
}

/**
 * `deflate` is meant to be zlib-wrapped (RFC 9110 8.4.1.2), but some servers send
 * raw deflate under that name; the first two bytes tell which it is.
 */
class DeflateDecoder extends Transform {
  private inner?: Transform;
  private head = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.inner) {
      this.inner.write(chunk, () => done());
      return;
    }
    this.head = Buffer.concat([this.head, chunk]);
    if (this.head.length < 2) return done();
    this.start(done);
  }

  override _flush(done: TransformCallback): void {
    if (!this.inner) {
      if (this.head.length === 0) return done();
      this.start(() => undefined);
    }
    this.inner!.once('end', () => done());
    this.inner!.end();
  }

  private start(done: (error?: Error | null) => void): void {
    const zlibWrapped =
      this.head.length >= 2 && (this.head[0] & 0x0f) === 8 && (this.head[0] * 256 + this.head[1]) % 31 === 0;
    const inner = zlibWrapped ? zlib.createInflate() : zlib.createInflateRaw();
    this.inner = inner;
    inner.on('data', (chunk: Buffer) => this.push(chunk));
    inner.on('error', (error) => this.destroy(error));
    const head = this.head;
    this.head = Buffer.alloc(0);
    inner.write(head, () => done());
  }
}
