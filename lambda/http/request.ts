import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { randomFillSync } from 'node:crypto';

/** Lambda's own request limit for function URLs; the local server enforces the same. */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

/** The request as every runtime presents it to the pipeline (a function URL event, decoded once). */
export interface IncomingRequest {
  id: string;
  method: string;
  path: string;
  query: URLSearchParams;
  /** The query string exactly as sent (without `?`): forwarded upstream untouched. */
  rawQuery: string;
  /** Lower-cased names; repeated headers comma-joined, as function URLs deliver them. */
  headers: Record<string, string | undefined>;
  body: Buffer;
  /**
   * The body as the event's own text, when it came as text (not base64): the pipeline reads the
   * JSON from it rather than from a copy decoded out of `body` (docs/deploy.md, "Memory").
   */
  bodyText?: string;
  /** The caller's address as the function URL saw it; failed sign-ins are counted per address. */
  sourceIp?: string;
  /** Wall-clock arrival (epoch ms) and a monotonic start for latency. */
  receivedAt: number;
  startedAt: number;
}

/**
 * Random bytes drawn 4 KB at a time (as `crypto.randomUUID` does): one call into the system's
 * generator per 512 requests, not one per request. Each id takes its own 8 bytes, never reused.
 */
const RANDOM_POOL = Buffer.alloc(4096);
let poolOffset = RANDOM_POOL.length;

function randomHex8(): string {
  if (poolOffset + 8 > RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    poolOffset = 0;
  }
  const hex = RANDOM_POOL.toString('hex', poolOffset, poolOffset + 8);
  poolOffset += 8;
  return hex;
}

/** Time-ordered ids (so rows sort by arrival in the console) with 64 random bits. */
export function newRequestId(now: number): string {
  return `${now.toString(36).padStart(9, '0')}-${randomHex8()}`;
}

/** The arrival time (epoch ms) a request id starts with; undefined for anything that is not one. */
export function requestIdTime(id: string): number | undefined {
  const match = /^([0-9a-z]{9})-[0-9a-f]{16}$/.exec(id);
  if (!match) return undefined;
  const time = parseInt(match[1], 36);
  return Number.isSafeInteger(time) && time <= 8.64e15 ? time : undefined;
}

export function fromFunctionUrlEvent(event: APIGatewayProxyEventV2): IncomingRequest {
  const receivedAt = Date.now();
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  // A function URL hands the cookies apart from the headers: they are read as one header, as sent.
  if (event.cookies?.length) headers.cookie = event.cookies.join('; ');
  const raw = event.body ?? '';
  return {
    id: newRequestId(receivedAt),
    method: (event.requestContext?.http?.method ?? 'GET').toUpperCase(),
    path: event.rawPath || '/',
    query: new URLSearchParams(event.rawQueryString ?? ''),
    rawQuery: event.rawQueryString ?? '',
    headers,
    body: event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8'),
    bodyText: event.isBase64Encoded ? undefined : raw,
    sourceIp: event.requestContext?.http?.sourceIp,
    receivedAt,
    startedAt: performance.now(),
  };
}
