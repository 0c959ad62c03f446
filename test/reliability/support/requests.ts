/** Plain HTTP calls to the proxy, one helper per shape the reliability and security tests need. */
import { connect } from 'node:net';
import type { ProviderId } from '../../fakes/start-fakes';
import type { ProxyServer } from '../../support/proxy-server';
import { TEST_MODELS } from '../../support/sdk-clients';

export const PROVIDERS: ProviderId[] = ['prov-a', 'prov-b', 'prov-c', 'prov-d', 'prov-e'];

/** The SDK-style path of each provider below the proxy base. */
export const ENDPOINT: Record<ProviderId, string> = {
  'prov-a': '/v1/messages',
  'prov-b': '/prov-b/v1/chat/completions',
  'prov-c': '/prov-c/v1/chat/completions',
  'prov-d': '/prov-d/v1/chat/completions',
  'prov-e': '/prov-e/v1/chat/completions',
};

export type Mode = 'stored' | 'pass-through';

export interface ProxyCall {
  provider: ProviderId;
  /** The proxy token of the account. */
  token: string;
  /** Pass-through: the client's own provider key (the token then goes in x-proxy-token). */
  providerKey?: string;
  stream?: boolean;
  /** A distinct prompt gives a distinct cache key. */
  prompt?: string;
  cache?: 'true' | 'refresh' | 'false';
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  signal?: AbortSignal;
  /** A query string (without `?`) added to the endpoint's path. */
  query?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  requestId: string;
}

export function requestBody(provider: ProviderId, prompt = 'Say hello.', stream = false): Record<string, unknown> {
  return { model: TEST_MODELS[provider], max_tokens: 64, messages: [{ role: 'user', content: prompt }], stream };
}

/** The credential headers of a provider's API style: a token alone (stored) or a key plus x-proxy-token. */
export function credentialHeaders(provider: ProviderId, token: string, providerKey?: string): Record<string, string> {
  const credential = providerKey ?? token;
  const headers: Record<string, string> =
    provider === 'prov-a'
      ? { 'x-api-key': credential, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${credential}` };
  if (providerKey) headers['x-proxy-token'] = token;
  return headers;
}

export async function callProxy(proxy: Pick<ProxyServer, 'proxyBase'>, call: ProxyCall): Promise<CallResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...credentialHeaders(call.provider, call.token, call.providerKey),
    ...(call.cache ? { 'x-proxy-cache': call.cache } : {}),
    ...call.headers,
  };
  const response = await fetch(proxy.proxyBase + ENDPOINT[call.provider] + (call.query ? `?${call.query}` : ''), {
    method: 'POST',
    headers,
    body: JSON.stringify(call.body ?? requestBody(call.provider, call.prompt, call.stream)),
    signal: call.signal,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    requestId: response.headers.get('x-proxy-request-id') ?? '',
  };
}

/** Whether a stream's text ends the way the provider's streams end (not cut off). */
export function streamEndedCleanly(provider: ProviderId, text: string): boolean {
  return provider === 'prov-a'
    ? /event: message_stop\s*\ndata: [^\n]*\n\n$/.test(text)
    : text.trimEnd().endsWith('data: [DONE]');
}

/** The proxy's own error shapes (docs/errors-and-limits.md). */
export function expectMessagesError(text: string): { type: string; message: string } {
  const body = JSON.parse(text) as { type?: unknown; error?: { type?: unknown; message?: unknown } };
  if (body.type !== 'error' || typeof body.error?.type !== 'string' || typeof body.error.message !== 'string') {
    throw new Error(`not a messages-style error body: ${text.slice(0, 300)}`);
  }
  return body.error as { type: string; message: string };
}

export function expectChatError(text: string): {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
} {
  const body = JSON.parse(text) as { error?: Record<string, unknown> };
  const error = body.error;
  if (
    !error ||
    typeof error.message !== 'string' ||
    typeof error.type !== 'string' ||
    !('param' in error) ||
    !('code' in error)
  ) {
    throw new Error(`not a chat-completions error body: ${text.slice(0, 300)}`);
  }
  return error as { message: string; type: string; param: string | null; code: string | null };
}

/** The management API's one error shape (docs/management-api.md, "Errors"). */
export function expectManagementError(text: string): { code: string; message: string; field: string | null } {
  const body = JSON.parse(text) as { error?: Record<string, unknown> };
  const error = body.error;
  const keys = error ? Object.keys(error).sort().join(',') : '';
  if (!error || keys !== 'code,field,message' || typeof error.code !== 'string' || typeof error.message !== 'string') {
    throw new Error(`not a management API error body: ${text.slice(0, 300)}`);
  }
  return error as { code: string; message: string; field: string | null };
}

/** Checks the error body against the shape of the provider's endpoint and returns its message. */
export function expectEndpointError(provider: ProviderId, text: string): string {
  return provider === 'prov-a' ? expectMessagesError(text).message : expectChatError(text).message;
}

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeats joined with ', '. */
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, for scans. */
  raw: string;
}

/**
 * Sends bytes exactly as given over a plain socket: for requests `fetch` refuses
 * to send (CR/LF in values, duplicate credentials, unnormalised paths, absolute-form targets).
 * The request should carry `connection: close`; the answer is read until the server closes.
 */
export function rawRequest(url: string, request: string | Buffer, timeoutMs = 15_000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('raw request: no complete answer in time'));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(raw);
      if (!match) return reject(new Error(`raw request: no HTTP answer (got ${JSON.stringify(raw.slice(0, 200))})`));
      const headEnd = raw.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of raw.slice(match[0].length, headEnd).split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      let body = headEnd < 0 ? '' : raw.slice(headEnd + 4);
      if (headers['transfer-encoding']?.includes('chunked')) body = unchunk(body);
      resolve({ status: Number(match[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8'), raw });
    });
    socket.write(request);
  });
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (let guard = 0; guard < 100_000 && rest.length; guard++) {
    const lineEnd = rest.indexOf('\r\n');
    if (lineEnd < 0) break;
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!size) break;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
  return out;
}

/** A raw HTTP/1.1 request with a body and `connection: close`. */
export function rawPost(url: string, path: string, headerLines: string[], body: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const host = new URL(url).host;
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: ${host}`,
    ...headerLines,
    `content-length: ${bytes.length}`,
    'connection: close',
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

/** Total requests the five fakes have received (a rejected request must not add to it). */
export function upstreamCalls(proxy: Pick<ProxyServer, 'fakes'>): number {
  return PROVIDERS.reduce((sum, id) => sum + proxy.fakes.fakes[id].requests.length, 0);
}
