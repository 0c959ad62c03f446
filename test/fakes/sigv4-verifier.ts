/**
 * Checks an AWS Signature Version 4 on a request as AWS does, written from the published algorithm
 * and independent of the signer the proxy uses: the canonical request is rebuilt from the bytes that
 * arrived (the raw path, each segment encoded once more; the query; the signed headers; the SHA-256 of
 * the body as received, never a hash the request merely claims), and the signature recomputed from the
 * secret key. `test/fakes/fake-bedrock.test.ts` shows it accepts what the AWS SDK itself signs and
 * refuses a changed body, signature, secret, scope or date.
 */
import { createHash, createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface SigningSecrets {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  service: string;
}

/** RFC 3986 encoding, as SigV4 writes every path segment and query part. */
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

function canonicalQuery(search: string): string {
  return search
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const [key, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      return [rfc3986(decodeURIComponent(key)), rfc3986(decodeURIComponent(value))] as const;
    })
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

/** Undefined when the signature is valid for these secrets; otherwise why not. */
export function sigV4Problem(
  method: string,
  rawUrl: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  secrets: SigningSecrets,
  now = Date.now(),
): string | undefined {
  const auth = String(headers.authorization ?? '');
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!match) return 'no SigV4 authorization header';
  const [, keyId, day, region, service, signedList, signature] = match as unknown as string[];
  if (keyId !== secrets.accessKeyId) return `unknown access key ${keyId}`;
  if (region !== secrets.region || service !== secrets.service)
    return `scope ${region}/${service}, expected ${secrets.region}/${secrets.service}`;
  const amzDate = String(headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(day!)) return 'x-amz-date is not the scope’s day';
  const signedAt = Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  if (!(Math.abs(now - signedAt) < 5 * 60_000)) return 'signed more than five minutes away from now';
  if (secrets.sessionToken !== undefined && headers['x-amz-security-token'] !== secrets.sessionToken)
    return 'missing or wrong x-amz-security-token';
  const signed = signedList!.split(';');
  for (const required of ['host', 'x-amz-date']) if (!signed.includes(required)) return `${required} is not signed`;
  if (secrets.sessionToken !== undefined && !signed.includes('x-amz-security-token'))
    return 'x-amz-security-token is not signed';
  const [path, search = ''] = rawUrl.split('?', 2) as [string, string?];
  const canonicalPath = path.split('/').map(rfc3986).join('/');
  const headerLines = signed
    .map(
      (name) =>
        `${name}:${String(headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  // The hash of the bytes that arrived: a signature over another body (or a claimed hash of one) fails.
  const payloadHash = sha256(body);
  const claimed = headers['x-amz-content-sha256'];
  if (claimed !== undefined && claimed !== payloadHash)
    return 'x-amz-content-sha256 is not the hash of the body received';
  const canonical = [method, canonicalPath, canonicalQuery(search), headerLines, signedList, payloadHash].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256(canonical)}`;
  const key = hmac(hmac(hmac(hmac(`AWS4${secrets.secretAccessKey}`, day!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return expected === signature ? undefined : 'the signature does not match';
}
