/**
 * A stand-in for Amazon S3's PutObject on 127.0.0.1, for the usage export: the AWS SDK's own S3
 * client (pointed here by `AWS_ENDPOINT_URL_S3`, path-style as the SDK addresses an IP endpoint)
 * writes each object into a directory on disk, under `<bucket>/<key>`, so the tests can read the
 * layout the export produces as Athena would. `failNext(n)` answers the next n PUTs with S3's 503
 * SlowDown, as S3 does when throttling.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, normalize } from 'node:path';

export interface FakeS3Put {
  bucket: string;
  key: string;
  contentType?: string;
  authorization: string;
  bytes: number;
}

export interface FakeS3 {
  endpoint: string;
  /** Every PUT that was stored, in order. */
  puts: FakeS3Put[];
  /** Answers the next `count` PUTs with 503 SlowDown (the SDK retries them itself). */
  failNext(count: number): void;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The payload of an `aws-chunked` body (`<hex size>[;chunk-signature=…]\r\n<bytes>\r\n` … `0\r\n` trailers). */
function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16);
    if (!size) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

function s3Error(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

export async function startFakeS3(root: string): Promise<FakeS3> {
  const puts: FakeS3Put[] = [];
  let failing = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const [, bucket = '', ...keyParts] = url.pathname.split('/');
      const key = keyParts.map(decodeURIComponent).join('/');
      if (req.method !== 'PUT' || !bucket || !key) return s3Error(res, 501, 'NotImplemented', 'only PutObject');
      if (failing > 0) {
        failing -= 1;
        return s3Error(res, 503, 'SlowDown', 'Please reduce your request rate.');
      }
      const target = normalize(join(root, bucket, key));
      if (!target.startsWith(normalize(root))) return s3Error(res, 400, 'InvalidArgument', 'key leaves the bucket');
      const chunked = String(req.headers['content-encoding'] ?? '').includes('aws-chunked');
      const data = chunked ? unchunk(body) : body;
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, data);
      puts.push({
        bucket,
        key,
        contentType: req.headers['content-type'],
        authorization: String(req.headers.authorization ?? ''),
        bytes: data.length,
      });
      res.writeHead(200, { etag: `"${puts.length}"` });
      res.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    puts,
    failNext: (count) => {
      failing = count;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
