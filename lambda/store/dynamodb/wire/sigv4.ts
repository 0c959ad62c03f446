import { createHmac, hash } from 'node:crypto';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What every DynamoDB JSON-protocol request is: a POST of a JSON body to `/`, its operation named by `x-amz-target`. */
export interface JsonPost {
  host: string;
  /** `x-amz-target`, e.g. `DynamoDB_20120810.GetItem`. */
  target: string;
  body: string;
  credentials: Credentials;
  now: Date;
}

export const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';

// One-shot hashing: a Hash object per digest costs more than the digest of a small body.
const sha256Hex = (data: string) => hash('sha256', data, 'hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** `2026-11-21T10:11:12.345Z` → `20261121T101112Z`, by position (every call signs: no regular expression). */
function amzDateOf(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/**
 * AWS Signature Version 4 for the one request shape the DynamoDB JSON protocol
 * needs. Its headers are always the same set, so the canonical request is
 * written in their sorted order directly (no per-call sorting or value
 * normalising: none of these values holds spaces). The signing key changes
 * once a day and is cached.
 */
export class SigV4Signer {
  private cachedKey?: { scope: string; key: Buffer };

  constructor(
    private readonly region: string,
    private readonly service: string,
  ) {}

  /** The request's headers, `authorization` included. */
  sign(input: JsonPost): Record<string, string> {
    const { host, target, credentials } = input;
    const amzDate = amzDateOf(input.now);
    const date = amzDate.slice(0, 8);
    const token = credentials.sessionToken;
    // Names in byte order: content-type, host, x-amz-date, x-amz-security-token, x-amz-target.
    const signedHeaders = token
      ? 'content-type;host;x-amz-date;x-amz-security-token;x-amz-target'
      : 'content-type;host;x-amz-date;x-amz-target';
    const headerLines = `content-type:${JSON_CONTENT_TYPE}\nhost:${host}\nx-amz-date:${amzDate}\n${token ? `x-amz-security-token:${token}\n` : ''}x-amz-target:${target}\n`;
    const canonical = `POST\n/\n\n${headerLines}\n${signedHeaders}\n${sha256Hex(input.body)}`;
    const scope = `${date}/${this.region}/${this.service}/aws4_request`;
    const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`;
    const signature = createHmac('sha256', this.signingKey(credentials.secretAccessKey, date, scope))
      .update(stringToSign, 'utf8')
      .digest('hex');
    const headers: Record<string, string> = {
      'content-type': JSON_CONTENT_TYPE,
      host,
      'x-amz-date': amzDate,
      'x-amz-target': target,
      authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    };
    if (token) headers['x-amz-security-token'] = token;
    return headers;
  }

  private signingKey(secret: string, date: string, scope: string): Buffer {
    const cacheId = `${scope}\u0000${secret}`;
    if (this.cachedKey?.scope === cacheId) return this.cachedKey.key;
    const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), this.region), this.service), 'aws4_request');
    this.cachedKey = { scope: cacheId, key };
    return key;
  }
}
