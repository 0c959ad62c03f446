import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ClientGoneError, UpstreamTimeoutError, UpstreamUnreachableError } from '../errors';

/**
 * Kept-alive sockets: after the first request to a provider, no TCP or TLS
 * handshake on the hot path. An idle socket is dropped by us after 2 s (the
 * agent destroys free sockets on timeout; active requests are not affected),
 * before a server's keep-alive timeout can close it under a request we just
 * sent: that race would surface as a reset and a 502.
 */
const FREE_SOCKET_TIMEOUT_MS = 2_000;
const agentOptions = { keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000, timeout: FREE_SOCKET_TIMEOUT_MS, scheduling: 'lifo' as const };
const httpAgent = new HttpAgent(agentOptions);
const httpsAgent = new HttpsAgent(agentOptions);

export interface UpstreamCall {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** Limit for the response headers to arrive (SPEC 5.3: 30 s). */
  timeoutMs: number;
  /** Fires when the client has gone away: the call is stopped (the local server knows; Lambda does not tell). */
  clientGone?: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: IncomingMessage;
  /** Stops the upstream call (client gone, stream stalled). */
  abort(): void;
}

/**
 * POSTs to the provider and resolves when its response headers arrive.
 * No headers within the limit → 504; connection refused or reset before headers → 502.
 */
export function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const secure = call.url.protocol === 'https:';
    const request = (secure ? httpsRequest : httpRequest)(call.url, {
      method: 'POST',
      headers: { ...call.headers, 'content-length': String(call.body.length) },
      agent: secure ? httpsAgent : httpAgent,
    });
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      request.destroy();
      reject(new UpstreamTimeoutError(call.timeoutMs));
    }, call.timeoutMs);

    const onClientGone = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      reject(new ClientGoneError());
    };
    if (call.clientGone?.aborted) return onClientGone();
    call.clientGone?.addEventListener('abort', onClientGone, { once: true });

    request.once('response', (response) => {
      call.clientGone?.removeEventListener('abort', onClientGone);
      clearTimeout(timer);
      if (settled) {
        response.destroy();
        return;
      }
      settled = true;
      resolve({ status: response.statusCode ?? 502, headers: response.headers, body: response, abort: () => request.destroy() });
    });
    request.once('error', (error) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      reject(new UpstreamUnreachableError(error));
    });
    request.end(call.body);
  });
}
