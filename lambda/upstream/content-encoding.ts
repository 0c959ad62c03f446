import { Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';

/**
 * The proxy asks providers for `accept-encoding: identity`, but a provider (or a
 * gateway in front of a self-hosted one) may compress anyway. The usage reader
 * then needs the decoded text; the client still gets the bytes as sent, except on
 * paths where the proxy edits the stream, which decode and send identity.
 */
export type BodyDecoding =
  | { kind: 'identity' }
  /** `create` makes a decoder: compressed bytes in, the body's text (with `edit` applied) out. */
  | { kind: 'decode'; coding: string; create: (edit?: ByteEdit) => Transform }
  /** `create` makes a stream that fails at once, saying which coding it can't read. */
  | { kind: 'unsupported'; coding: string; create: (edit?: ByteEdit) => Transform };

type DecoderFactory = () => Transform;

/** An edit applied to the decoded bytes as they come (the credential redactor). */
export interface ByteEdit {
  write(chunk: Buffer): Buffer;
  end(): Buffer;
}

const DECODERS: Record<string, DecoderFactory> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => new DeflateDecoder(),
  br: () => zlib.createBrotliDecompress(),
};

/** What `content-encoding` says about the body: nothing to do, how to decode it, or a coding this runtime can't read. */
export function bodyDecoding(header: string | string[] | undefined): BodyDecoding {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const codings = value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding && coding !== 'identity');
  if (codings.length === 0) return { kind: 'identity' };
  const unknown = codings.find((coding) => !DECODERS[coding]);
  if (unknown) return { kind: 'unsupported', coding: unknown, create: () => new Unreadable(unknown) };
  // Codings are listed in the order they were applied; decoding undoes them last first.
  const factories = codings.map((coding) => DECODERS[coding]).reverse();
  return { kind: 'decode', coding: codings.join(', '), create: (edit) => chain(factories.map((create) => create()), edit) };
}

function chain(decoders: Transform[], edit?: ByteEdit): Transform {
  if (decoders.length === 1 && !edit) return decoders[0];
  return new Chain(decoders, edit);
}

/** Several decoders as one stream: bytes in at the first, decoded text out of the last, edited. */
class Chain extends Transform {
  private readonly first: Transform;
  private readonly last: Transform;

  constructor(decoders: Transform[], private readonly edit?: ByteEdit) {
    super();
    for (let i = 0; i < decoders.length - 1; i++) decoders[i].pipe(decoders[i + 1]);
    this.first = decoders[0];
    this.last = decoders[decoders.length - 1];
    this.last.on('data', (chunk: Buffer) => {
      const out = this.edit ? this.edit.write(chunk) : chunk;
      if (out.length) this.push(out);
    });
    for (const decoder of decoders) decoder.on('error', (error) => this.destroy(error));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.first.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    this.last.once('end', () => {
      const rest = this.edit?.end();
      if (rest?.length) this.push(rest);
      done();
    });
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
    const zlibWrapped = this.head.length >= 2 && (this.head[0] & 0x0f) === 8 && (this.head[0] * 256 + this.head[1]) % 31 === 0;
    const inner = zlibWrapped ? zlib.createInflate() : zlib.createInflateRaw();
    this.inner = inner;
    inner.on('data', (chunk: Buffer) => this.push(chunk));
    inner.on('error', (error) => this.destroy(error));
    const head = this.head;
    this.head = Buffer.alloc(0);
    inner.write(head, () => done());
  }
}

/** Stands in for a decoder this runtime lacks: the reader learns why it got no text. */
class Unreadable extends Transform {
  constructor(private readonly coding: string) {
    super();
  }

  override _transform(_chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    done(new Error(`unsupported content-encoding ${this.coding}`));
  }
}
