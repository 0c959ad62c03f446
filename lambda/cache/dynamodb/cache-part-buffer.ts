import { createHash } from 'node:crypto';

/**
 * Turns a body that arrives as text chunks into fixed-size UTF-8 parts for a
 * store with an item size limit, hashing the bytes on the way.
 *
 * Parts are cut at exact byte counts, even inside a multi-byte character: the
 * reader joins the bytes before decoding, so no character is ever split in
 * the decoded text. A high surrogate at the end of a chunk is held back until
 * the next chunk, so a pair split across two chunks still encodes as one character.
 */
export class PartBuffer {
  private readonly hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private carry = '';
  private total = 0;

  constructor(private readonly partBytes: number) {
    if (!Number.isInteger(partBytes) || partBytes <= 0) throw new RangeError('partBytes must be a positive integer');
  }

  /** Bytes taken in so far. */
  get totalBytes(): number {
    return this.total;
  }

  /** Adds a chunk; returns the parts that are now full, in order. */
  push(chunk: string): Buffer[] {
    let text = this.carry + chunk;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    if (text) this.take(Buffer.from(text, 'utf8'));
    return this.cutFullParts();
  }

  /**
   * Ends the body: the full parts still to store, the last part (at most `partBytes`,
   * possibly empty), and the SHA-256 (hex) and byte count of the whole body.
   */
  finish(): { parts: Buffer[]; rest: Buffer; sha256: string; totalBytes: number } {
    if (this.carry) this.take(Buffer.from(this.carry, 'utf8'));
    this.carry = '';
    const parts = this.cutFullParts();
    const rest = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    return { parts, rest, sha256: this.hash.digest('hex'), totalBytes: this.total };
  }

  private take(bytes: Buffer): void {
    this.hash.update(bytes);
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.total += bytes.length;
  }

  /** Keeps the last (partial or exactly full) part pending, so `finish` can still decide to store a small body inline. */
  private cutFullParts(): Buffer[] {
    if (this.pendingBytes <= this.partBytes) return [];
    const joined = Buffer.concat(this.pending, this.pendingBytes);
    const parts: Buffer[] = [];
    let offset = 0;
    while (joined.length - offset > this.partBytes) {
      parts.push(joined.subarray(offset, offset + this.partBytes));
      offset += this.partBytes;
    }
    const remainder = joined.subarray(offset);
    this.pending = [remainder];
    this.pendingBytes = remainder.length;
    return parts;
  }
}
