import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { ClientGoneError, ProxyError, UpstreamTimeoutError, UpstreamUnreachableError } from '../base/errors';

/**
 * Kept-alive sockets: after the first request to a provider, no TCP or TLS
 * handshake on the hot path. An idle socket is dropped by us after 2 s (the
 * agent destroys free sockets on timeout; active requests are not affected),
 * so that most of the time a server's keep-alive timeout cannot close it under
 * a request we just sent; when it does anyway, the attempt loop (attempts.ts) sends it once more.
 */
const FREE_SOCKET_TIMEOUT_MS = 2_000;
const agentOptions = {
  keepAlive: true,
  maxSockets: 512,
  keepAliveMsecs: 10_000,
  timeout: FREE_SOCKET_TIMEOUT_MS,
  scheduling: 'lifo' as const,
};
const httpAgent = new HttpAgent(agentOptions);
const httpsAgent = new HttpsAgent(agentOptions);

/** Socket errors that mean the peer closed the connection (as opposed to refusing or never answering). */
const CLOSED_BY_PEER = new Set(['ECONNRESET', 'EPIPE']);
/** Errors that mean no connection was made: nothing reached the provider. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/**
 * A connection closed this long after the request went out, with no byte of an answer, was held by
 * the provider: it read the request and may have worked on it, so it is never sent there again.
 * A closing of a socket the provider had dropped while idle, or a reset by a restarting server, comes
 * within milliseconds; the margin is for a busy process noticing it late (seen past 1 s at 64
 * requests in flight on two loaded cores).
 */
export const HELD_REQUEST_MS = 3_000;

export interface UpstreamCall {
  /** POST unless said otherwise; any method reaches a provider's other paths. */
  method?: string;
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** Limit for the response headers to arrive (30 s by default; docs/errors-and-limits.md, "Limits"). */
  timeoutMs: number;
  /** The limit a timeout's message names, when `timeoutMs` is only what is left of it (a request that first waited). */
  namedLimitMs?: number;
  /**
   * Fires when the client has gone away, or the server cut the request (its reason then is a
   * `ProxyError` saying so): the call is stopped (the local server knows; Lambda does not tell).
   */
  clientGone?: AbortSignal;
  /** A one-off connection, not one from the pool: a resend after a stale socket cannot meet another. */
  freshConnection?: boolean;
}

const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** A provider's response body: the socket's, or one whose start was read ahead (peek-body.ts). */
export type UpstreamBody = Readable & { readonly complete: boolean };

export interface UpstreamResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: UpstreamBody;
  /** Stops the upstream call (client gone, stream stalled). */
  abort(): void;
}

/**
 * Sends the request to the provider once and resolves when its response headers arrive.
 * No headers within the limit → 504; connection refused or reset before headers → 502, saying
 * whether the request may be sent again (`resendable`): only when the provider cannot have read
 * and held it. Whether to send again is the attempt loop's decision (attempts.ts).
 */
export function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const freshConnection = call.freshConnection ?? false;
  return new Promise((resolve, reject) => {
    // Never start a request for a client that has already left: nothing to abort, nothing to handle.
    if (call.clientGone?.aborted) return reject(whyGone(call.clientGone));
    const secure = call.url.protocol === 'https:';
    const pooled = secure ? httpsAgent : httpAgent;
    const request = (secure ? httpsRequest : httpRequest)(call.url, {
      method: call.method ?? 'POST',
      // A GET or HEAD without a body says nothing about its length, as clients send it.
      headers:
        call.body.length || !BODILESS.has(call.method ?? 'POST')
          ? { ...call.headers, 'content-length': String(call.body.length) }
          : call.headers,
      // `false`: a one-off connection, so a retry cannot pick another stale socket from the pool.
      agent: freshConnection ? false : pooled,
    });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    /** When the last byte of the request was handed to the socket. */
    let sentAt: number | undefined;
    request.once('finish', () => (sentAt = performance.now()));
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      call.clientGone?.removeEventListener('abort', onClientGone);
    };
    // Attached before anything can destroy the request: an 'error' without a listener ends the process.
    // It stays attached for the request's whole life (abort() after the headers destroys it too).
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settle();
      const code = error.code ?? '';
      const heldFor = sentAt === undefined ? 0 : performance.now() - sentAt;
      const closedAtOnce = CLOSED_BY_PEER.has(code) && heldFor < HELD_REQUEST_MS;
      const resendable = NOT_CONNECTED.has(code) || closedAtOnce;
      reject(new UpstreamUnreachableError(error, resendable, closedAtOnce && request.reusedSocket));
    });
    function onClientGone() {
      if (settled) return;
      settle();
      request.destroy();
      reject(whyGone(call.clientGone!));
    }
    call.clientGone?.addEventListener('abort', onClientGone, { once: true });
    timer = setTimeout(() => {
      if (settled) return;
      settle();
      request.destroy();
      reject(new UpstreamTimeoutError(call.namedLimitMs ?? call.timeoutMs));
    }, call.timeoutMs);

    request.once('response', (response) => {
      if (settled) {
        response.destroy();
        return;
      }
      settle();
      resolve({
        status: response.statusCode ?? 502,
        headers: response.headers,
        body: response,
        abort: () => request.destroy(),
      });
    });
    request.end(call.body);
  });
}

/** The server's own reason when it cut the request; otherwise the client left. */
export function whyGone(signal: AbortSignal): ProxyError {
  return signal.reason instanceof ProxyError ? signal.reason : new ClientGoneError();
}
