import type { IncomingMessage } from 'node:http';
import type { Dialect } from '../providers/types';
import { redactText } from '../streaming/redact';
import { ACCEPTED_ENCODINGS } from './content-encoding';

/** Hop-by-hop headers (RFC 9110 7.6.1) and ones the HTTP client sets itself. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/**
 * Headers that carry a credential in some provider's SDK: the proxy sets the one its
 * provider reads and forwards none of the client's (SECURITY.md, "Tokens").
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization', // OpenAI-style `Bearer` keys
  'proxy-authorization', // credentials for a proxy on the way, never for the provider
  'x-api-key', // Anthropic-style keys
  'api-key', // Azure OpenAI-style keys
  'x-goog-api-key', // Gemini keys
]);

/**
 * Never forwarded: the proxy's own headers, any credential (it is replaced by
 * the provider key), the caller's network identity added by the platform, and
 * cookies. The client's compression wishes are replaced by the proxy's own.
 */
function isWithheld(name: string, dialect: Dialect): boolean {
  if (dialect.forwardedHeaderPrefix && name.startsWith(dialect.forwardedHeaderPrefix)) return false;
  return (
    HOP_BY_HOP.has(name) ||
    CREDENTIAL_HEADERS.has(name) ||
    name.startsWith('x-proxy-') ||
    name === 'cookie' ||
    name === 'accept-encoding' ||
    name === 'forwarded' ||
    name === 'via' ||
    name.startsWith('x-forwarded-') ||
    name.startsWith('x-amzn-') ||
    name.startsWith('x-amz-')
  );
}

/**
 * A header value as Node's HTTP client must be given it to send its UTF-8 bytes: one Latin-1
 * character per byte (it sends each character as one byte, and refuses any past U+00FF). The client's
 * headers were read as UTF-8 text, so this sends the bytes it sent.
 */
function wireText(value: string): string {
  return /[\u0080-\uffff]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
}

/**
 * The headers sent upstream. `proxySecrets` are the proxy token as presented and its secret
 * part: a header quoting either (under any name) stays with the proxy. `providerKey` absent: the
 * request will be signed instead (a provider reached through AWS).
 */
export function upstreamRequestHeaders(
  client: Record<string, string | undefined>,
  dialect: Dialect,
  providerKey: string | undefined,
  hasBody = true,
  proxySecrets: ReadonlyArray<string | undefined> = [],
): Record<string, string> {
  // Headers the client named in `Connection` are hop-by-hop too (RFC 9110 7.6.1).
  const named = new Set(
    (client.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const secrets = proxySecrets.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(client)) {
    if (value === undefined || isWithheld(name, dialect) || named.has(name)) continue;
    if (secrets.some((secret) => value.includes(secret))) continue;
    headers[name] = wireText(value);
  }
  const { header, scheme } = dialect.credential;
  if (providerKey !== undefined) headers[header] = scheme ? `${scheme} ${providerKey}` : providerKey;
  headers['accept-encoding'] = ACCEPTED_ENCODINGS;
  // A JSON endpoint's body is JSON whatever the client labelled it (no type, or curl's form default).
  const type = headers['content-type'];
  if (hasBody && (type === undefined || (dialect.requestBody === 'json' && !/json/i.test(type))))
    headers['content-type'] = 'application/json';
  return headers;
}

/**
 * The provider's response headers as the client gets them (length is dropped: the body is streamed).
 * A `decoded` body leaves as identity: its `content-encoding` goes, and so does a strong `etag`
 * (it named the encoded bytes; SECURITY.md, "Keys"). A value quoting one of the request's
 * credentials (`secrets`, from `searchableSecrets`) keeps its header with `[redacted]` in the
 * credential's place, as a body does; a header whose name holds one (names arrive lower-cased,
 * and `[redacted]` cannot stand in a name) is dropped (SECURITY.md, "What is scrubbed where").
 */
export function clientResponseHeaders(
  upstream: IncomingMessage['headers'],
  decoded = false,
  secrets: readonly string[] = [],
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'set-cookie') continue;
    if (secrets.some((secret) => name.includes(secret.toLowerCase()))) continue;
    if (decoded && (name === 'content-encoding' || (name === 'etag' && !String(value).startsWith('W/')))) continue;
    headers[name] = redactText(Array.isArray(value) ? value.join(', ') : value, secrets);
  }
  return headers;
}
