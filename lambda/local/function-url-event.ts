import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { MAX_BODY_BYTES } from '../http/request';

/** How much of an oversized body is read and discarded, and for how long, before the connection is dropped. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
const DRAIN_LIMIT_MS = 10_000;

/**
 * Reads the body, keeping one byte past Lambda's limit (the pipeline answers 413). The rest of an
 * oversized body is read and discarded before the answer goes out, and the answer closes the
 * connection: a kept-alive socket with unread body bytes would hand them to the next request
 * as garbage, and closing while the client still sends would reset the connection before the
 * client reads the 413.
 */
async function readBody(request: IncomingMessage, response: ServerResponse): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let discarded = 0;
  const drainUntil = Date.now() + DRAIN_LIMIT_MS;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    if (size <= MAX_BODY_BYTES) {
      const kept = buffer.subarray(0, MAX_BODY_BYTES + 1 - size);
      chunks.push(kept);
      size += kept.length;
      discarded += buffer.length - kept.length;
    } else {
      discarded += buffer.length;
    }
    if (discarded > DRAIN_LIMIT_BYTES || (discarded > 0 && Date.now() > drainUntil)) break;
  }
  if (size > MAX_BODY_BYTES) response.setHeader('connection', 'close');
  return Buffer.concat(chunks, size);
}

/**
 * The request target split as received, never normalised: a dot segment or an encoded one
 * (`/prov-b/x/../../prov-a/…`, `%2e%2e`) must reach the router as sent, which refuses it
 * (README, "Endpoints"); `new URL()` would resolve it first. An absolute-form target
 * (`POST http://host/path`) gives its path the same way.
 */
export function splitTarget(target: string): { rawPath: string; rawQueryString: string } {
  let rest = target || '/';
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length) || '/';
  const query = rest.indexOf('?');
  return query < 0
    ? { rawPath: rest, rawQueryString: '' }
    : { rawPath: rest.slice(0, query), rawQueryString: rest.slice(query + 1) };
}

/**
 * A header value as the text its bytes spell in UTF-8. Node's HTTP parser hands each byte over as
 * one Latin-1 character (`josé` arrives as `josÃ©`); bytes that are no UTF-8 become U+FFFD, which
 * the pipeline refuses (lambda/pipeline/edge-checks.ts).
 */
export function headerText(latin1: string): string {
  return /[\u0080-\uffff]/.test(latin1) ? Buffer.from(latin1, 'latin1').toString('utf8') : latin1;
}

/** A Node request as the function URL (payload format 2.0) event Lambda would deliver. */
export async function toFunctionUrlEvent(
  request: IncomingMessage,
  response: ServerResponse,
): Promise<APIGatewayProxyEventV2> {
  const { rawPath, rawQueryString } = splitTarget(request.url ?? '/');
  const headers: Record<string, string> = {};
  // headersDistinct keeps repeats that Node would drop (e.g. a second Authorization); function URLs comma-join them.
  for (const [name, values] of Object.entries(request.headersDistinct)) {
    if (values === undefined || name === 'cookie') continue;
    headers[name] = values.map(headerText).join(',');
  }
  // Read before the body: stopping early at the drain limit detaches the socket.
  const sourceIp = request.socket?.remoteAddress ?? '127.0.0.1';
  const body = await readBody(request, response);
  const contentType = headers['content-type'] ?? '';
  // Lambda passes text bodies as text and everything else base64-encoded.
  const isText = /json|text|xml|x-www-form-urlencoded/i.test(contentType);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    cookies: request.headers.cookie?.split(/;\s*/),
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length ? (isText ? body.toString('utf8') : body.toString('base64')) : undefined,
    isBase64Encoded: body.length > 0 && !isText,
  };
}
