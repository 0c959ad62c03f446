/** What the encoding redaction tests share: the codings a provider may apply, a raw answer, a finder of secrets. */
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';

export type Mode = 'stored' | 'pass-through';

/** Each coding as `content-encoding` names it, and how the provider applied it (in the order listed). */
export const CODINGS: Record<string, (body: Buffer) => Buffer> = {
  gzip: (body) => gzipSync(body),
  deflate: (body) => deflateSync(body),
  br: (body) => brotliCompressSync(body),
  zstd: (body) => zstdCompressSync(body),
  'zstd, gzip': (body) => gzipSync(zstdCompressSync(body)),
  'gzip, br': (body) => brotliCompressSync(gzipSync(body)),
};

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  requestId: string;
}

/** The secrets found in `text`, each by its first characters only. */
export const present = (text: string, secrets: string[]) =>
  secrets.filter((secret) => text.includes(secret)).map((secret) => `${secret.slice(0, 12)}…`);

/** Writes `encoded` in three parts, so a credential (or a frame) may span two compressed writes. */
export async function writeInThirds(encoded: Buffer, write: (part: Buffer) => Promise<void>): Promise<void> {
  const third = Math.ceil(encoded.length / 3);
  for (let at = 0; at < encoded.length; at += third) await write(encoded.subarray(at, at + third));
}
