import { Transform, type TransformCallback } from 'node:stream';

/**
 * Holds a (small) error body and replaces every occurrence of a secret before
 * passing it on: a provider that quotes the stored key in its error message
 * must not hand it to the client or to the usage row.
 */
export class Redactor extends Transform {
  private readonly chunks: Buffer[] = [];

  constructor(private readonly secret: string, private readonly replacement = '[redacted]') {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.chunks.push(chunk);
    done();
  }

  override _flush(done: TransformCallback): void {
    done(null, Buffer.from(Buffer.concat(this.chunks).toString('utf8').split(this.secret).join(this.replacement), 'utf8'));
  }
}
