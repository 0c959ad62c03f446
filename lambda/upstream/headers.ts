import type { IncomingMessage } from 'node:http';
import type { Dialect } from '../providers/types';

/** Hop-by-hop headers (RFC 9110 7.6.1) and ones the HTTP client sets itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

/**
 * Never forwarded: the proxy's own headers, any credential (it is replaced by
 * the provider key), the caller's network identity added by the platform, and
 * cookies. Compression is asked off so usage can be read from the body.
 */
function isWithheld(name: string): boolean {
  return (
    HOP_BY_HOP.has(name) ||
    name.startsWith('x-proxy-') ||
    name === 'authorization' ||
    name === 'x-api-key' ||
    name === 'cookie' ||
    name === 'accept-encoding' ||
    name === 'forwarded' ||
    name === 'via' ||
    name.startsWith('x-forwarded-') ||
    name.startsWith('x-amzn-') ||
    name.startsWith('x-amz-')
  );
}

export function upstreamRequestHeaders(client: Record<string, string | undefined>, dialect: Dialect, providerKey: string, hasBody = true): Record<string, string> {
  // Headers the client named in `Connection` are hop-by-hop too (RFC 9110 7.6.1).
  const named = new Set((client.connection ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(client)) {
    if (value !== undefined && !isWithheld(name) && !named.has(name)) headers[name] = value;
  }
  const { header, scheme } = dialect.credential;
  headers[header] = scheme ? `${scheme} ${providerKey}` : providerKey;
  headers['accept-encoding'] = 'identity';
  // A JSON endpoint's body is JSON whatever the client labelled it (no type, or curl's form default).
  const type = headers['content-type'];
  if (hasBody && (type === undefined || (dialect.requestBody === 'json' && !/json/i.test(type)))) headers['content-type'] = 'application/json';
  return headers;
}

/** The provider's response headers as the client gets them (length is dropped: the body is streamed). */
export function clientResponseHeaders(upstream: IncomingMessage['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'set-cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
