import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { UpstreamTimeoutError, UpstreamUnreachableError } from '../errors';

// Kept-alive sockets: after the first request to a provider, no TCP or TLS handshake on the hot path.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });

export interface UpstreamCall {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** Limit for the response headers to arrive (SPEC 5.3: 30 s). */
  timeoutMs: number;
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
export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const deadline = Date.now() + call.timeoutMs;
  try {
    return await attempt(call, call.timeoutMs);
  } catch (error) {
    // A kept-alive socket the provider had just closed fails before the request
    // reached it; that one case is retried once, on a fresh connection.
    if (!(error instanceof StaleSocketError)) throw error;
    return attempt(call, Math.max(1, deadline - Date.now()));
  }
}

class StaleSocketError extends Error {}

function attempt(call: UpstreamCall, timeoutMs: number): Promise<UpstreamResponse> {
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
    }, timeoutMs);

    request.once('response', (response) => {
      clearTimeout(timer);
      if (settled) {
        response.destroy();
        return;
      }
      settled = true;
      resolve({ status: response.statusCode ?? 502, headers: response.headers, body: response, abort: () => request.destroy() });
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      const stale = request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      reject(stale ? new StaleSocketError(error.message) : new UpstreamUnreachableError(error));
    });
    request.end(call.body);
  });
}
