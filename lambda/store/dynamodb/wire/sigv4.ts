import { createHash, createHmac } from 'node:crypto';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * AWS Signature Version 4 for a POST of a JSON body to `/` (the only request
 * shape the DynamoDB JSON protocol needs). The signing key changes once a day
 * and is cached.
 */
export class SigV4Signer {
  private cachedKey?: { scope: string; key: Buffer };

  constructor(private readonly region: string, private readonly service: string) {}

  sign(input: { host: string; headers: Record<string, string>; body: string; credentials: Credentials; now: Date }): Record<string, string> {
    const amzDate = input.now.toISOString().replace(/[:-]|\.\d{3}/g, '');
    const date = amzDate.slice(0, 8);
    const headers: Record<string, string> = { ...input.headers, host: input.host, 'x-amz-date': amzDate };
    if (input.credentials.sessionToken) headers['x-amz-security-token'] = input.credentials.sessionToken;
    const names = Object.keys(headers).map((name) => name.toLowerCase()).sort();
    const lower: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value.trim().replace(/\s+/g, ' ');
    const signedHeaders = names.join(';');
    const canonical = ['POST', '/', '', names.map((name) => `${name}:${lower[name]}\n`).join(''), signedHeaders, sha256Hex(input.body)].join('\n');
    const scope = `${date}/${this.region}/${this.service}/aws4_request`;
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonical)].join('\n');
    const signature = createHmac('sha256', this.signingKey(input.credentials.secretAccessKey, date, scope)).update(stringToSign, 'utf8').digest('hex');
    headers.authorization = `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
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
