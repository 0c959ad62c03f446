import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ObjectStore } from './ports';

/**
 * The stack's export bucket. Imported by the stream consumer's Lambda entry only, so the local
 * server never loads the S3 client. The bucket encrypts every object itself (docs/alerts.md).
 */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;

  constructor(
    region: string,
    private readonly bucket: string,
  ) {
    this.client = new S3Client({ region });
  }

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
