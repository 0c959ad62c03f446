import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ObjectStore } from './ports';

/**
 * The stack's export bucket, on the client the composition root builds (wiring/aws-adapters.ts, which
 * the local server never loads). The bucket encrypts every object itself (docs/alerts.md).
 */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Uint8Array): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        // Athena and DuckDB tell gzip by the key's `.gz`; no Content-Encoding, so downloads stay as stored.
        ContentType: 'application/gzip',
      }),
    );
  }
}
