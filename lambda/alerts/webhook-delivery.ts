import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './address-rules';

/** Connect, send and answer, all within this (docs/alerts.md): a slow receiver is a failed delivery. */
export const WEBHOOK_TIMEOUT_MS = 5_000;
export const SIGNATURE_HEADER = 'x-proxy-signature';

/**
 * `t=<unix seconds>,v1=<hex>`: the HMAC-SHA256, under the account's webhook secret, of the time,
 * a dot and the exact body bytes (as Stripe signs). The time is signed so a receiver refuses a
 * post replayed outside its tolerance window (docs/alerts.md, "Checking the signature").
 */
export function signature(body: string, secret: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** Why a delivery failed; `retryable` when sending again may succeed (network, 429, 5xx). */
export class WebhookError extends Error {
  override readonly name = 'WebhookError';
  constructor(
    readonly problem: string,
    readonly retryable: boolean,
  ) {
    super(`webhook not delivered: ${problem}`);
  }
}

export interface WebhookPolicy {
  /** Lifts the address rule and accepts http:// (ALERT_WEBHOOK_ALLOW_PRIVATE=true: local use and tests only). */
  allowPrivate: boolean;
}

/** Why a webhook URL is refused when it is set; undefined when it may be used. */
export function webhookUrlProblem(text: string, policy: WebhookPolicy): string | undefined {
  if (!URL.canParse(text)) return 'url must be an absolute https:// URL.';
  const url = new URL(text);
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return 'url must be an https:// URL.';
  if (url.username || url.password) return 'url must not carry a user name or password.';
  if (text.length > 2_048) return 'url must be at most 2048 characters.';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && (host === 'localhost' || (isIP(host) && !isPublicAddress(host))))
    return 'url must reach a public address (not this machine, a private network or a link-local address).';
  return undefined;
}

/**
 * Resolves the host and hands the connection only a public address, so the address checked is the
 * one connected to (a name that resolves to a private address, or changes its answer between a
 * check and the connection, is refused).
 */
export function publicOnlyLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, done) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return done(error, '', 0);
      const usable = allowPrivate ? addresses : addresses.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) return done(new WebhookError('the host resolves to no public address', false), '', 0);
      if (options.all) return (done as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      done(null, usable[0].address, usable[0].family);
    });
  };
}

/** Posts the signed JSON once, signed at `now`: no redirects followed, nothing read of the answer but its status. */
export function postSigned(
  url: string,
  body: string,
  secret: string,
  policy: WebhookPolicy,
  now: number = Date.now(),
): Promise<number> {
  const problem = webhookUrlProblem(url, policy);
  if (problem) return Promise.reject(new WebhookError(problem, false));
  const target = new URL(url);
  const options: RequestOptions = {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': 'ai-usage-proxy-alerts',
      [SIGNATURE_HEADER]: signature(body, secret, Math.floor(now / 1000)),
    },
    lookup: publicOnlyLookup(policy.allowPrivate),
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    agent: false,
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const request = send(target, options, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) resolve(status);
      else reject(new WebhookError(`answered ${status}`, status === 429 || status >= 500));
    });
    request.on('socket', (socket) =>
      socket.once('connect', () => {
        // An IP literal never goes through the lookup: the connected address is checked here too.
        const address = socket.remoteAddress ?? '';
        if (!policy.allowPrivate && !isPublicAddress(address))
          request.destroy(new WebhookError('the host is not a public address', false));
      }),
    );
    request.on('error', (error) =>
      reject(
        error instanceof WebhookError
          ? error
          : new WebhookError(
              error.name === 'AbortError' || error.name === 'TimeoutError' ? 'timed out' : 'network error',
              true,
            ),
      ),
    );
    request.end(body);
  });
}
