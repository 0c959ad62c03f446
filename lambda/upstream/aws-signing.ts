import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { AwsCredentialsUnavailableError } from '../base/errors';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Where the runtime's AWS credentials come from (in Lambda, the function's role). */
export type AwsCredentialSource = () => Promise<AwsCredentials>;

/** Who a signed request is for: the region and the service name of its signing scope. */
export interface AwsScope {
  region: string;
  service: string;
}

type Bytes = string | ArrayBuffer | ArrayBufferView;
const toBuffer = (data: Bytes) =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 (and HMAC-SHA-256 with a secret) from node:crypto, in the shape the signer takes. */
export class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: Bytes) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: Bytes): void {
    this.hash.update(toBuffer(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

/** A query string's parameters as the signer reads them (`+` is a plus, not a space, in AWS's canonical form). */
function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const pair of url.search.slice(1).split('&').filter(Boolean)) {
    const at = pair.indexOf('=');
    const key = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
    const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1));
    const known = query[key];
    query[key] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  return query;
}

/**
 * Signs an upstream request with AWS Signature Version 4 (the maintained `@smithy/signature-v4`),
 * over the URL as it is sent (an encoded model ARN stays encoded, and is encoded once more in the
 * canonical path, as AWS expects) and every header the request carries. Returns the headers to send.
 */
export async function signAwsRequest(
  request: { method: string; url: URL; headers: Record<string, string>; body: Buffer },
  scope: AwsScope,
  credentials: AwsCredentialSource,
): Promise<{ headers: Record<string, string>; secrets: string[] }> {
  let resolved: AwsCredentials;
  try {
    resolved = await credentials();
  } catch (error) {
    throw new AwsCredentialsUnavailableError(error);
  }
  const { url } = request;
  // A signer per request: deriving its signing key is four HMACs, and the credentials may have been renewed.
  const signer = new SignatureV4({
    region: scope.region,
    service: scope.service,
    sha256: NodeSha256,
    credentials: resolved,
    uriEscapePath: true,
  });
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: queryOf(url),
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  // What an answer must never quote back (SECURITY.md, "Keys"): the session token, and the signature with the key id it names.
  const signature = /Signature=([0-9a-f]+)/.exec(signed.headers.authorization ?? '')?.[1];
  return {
    headers: signed.headers,
    secrets: [resolved.sessionToken, resolved.accessKeyId, signature].filter(
      (secret): secret is string => secret !== undefined,
    ),
  };
}
