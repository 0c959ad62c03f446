/**
 * The errors the proxy answers with itself. Each carries its status; the one
 * place that renders them is `pipeline/answer-errors.ts`, in the endpoint's own
 * error shape.
 */
export class ProxyError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: { param?: string; code?: string; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = new.target.name;
  }
}

export class AuthenticationError extends ProxyError {
  constructor(message: string) {
    super(401, message);
  }
}

/**
 * Too many wrong credentials from one address lately: this one is refused without being checked
 * (docs/operations.md, "Failed sign-ins"), whether it is right or wrong.
 */
export class SignInThrottledError extends ProxyError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      `Too many failed sign-ins from this address: credentials from it are not checked for ${retryAfterSeconds} seconds.`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    );
  }
}

export class PermissionError extends ProxyError {
  constructor(message: string) {
    super(403, message);
  }
}

/**
 * A request judged against the account's own rules (a model list, a budget) and refused before
 * anything was sent upstream. Unlike a malformed or unauthenticated request, it leaves a usage row,
 * so the refusal shows in the logs of the token that made it.
 */
export abstract class RefusalError extends ProxyError {}

/** The token's model list does not include the model asked for; nothing was sent upstream. */
export class ModelNotAllowedError extends RefusalError {
  constructor(message: string) {
    super(403, message, { param: 'model', code: 'model_not_allowed' });
  }
}

export class ValidationError extends ProxyError {
  constructor(message: string, param?: string) {
    super(400, message, { param });
  }
}

export class UnsupportedMediaTypeError extends ProxyError {
  constructor(contentType: string) {
    super(415, `The request body must be JSON (content-type: application/json), not "${contentType.slice(0, 80)}".`);
  }
}

export class NotFoundError extends ProxyError {
  constructor(message: string) {
    super(404, message);
  }
}

export class MethodNotAllowedError extends ProxyError {
  constructor(method: string, allowed: string) {
    super(405, `Method ${method} is not allowed here; use ${allowed}.`, { headers: { allow: allowed } });
  }
}

export class PayloadTooLargeError extends ProxyError {
  constructor(limitBytes: number) {
    super(413, `The request body is larger than ${limitBytes / (1024 * 1024)} MB.`);
  }
}

export class RateLimitedError extends ProxyError {
  /** `retryAfterSeconds`: by then every request counted against this one has left the window. */
  constructor(limit: number, headers: Record<string, string>, retryAfterSeconds: number) {
    super(
      429,
      `Rate limit reached: ${limit} requests per minute for this proxy token. Retry after ${retryAfterSeconds} seconds.`,
      { headers: { 'retry-after': String(retryAfterSeconds), ...headers } },
    );
  }
}

/** A budget of the token or requester is used up for its period; nothing was sent upstream. */
export class BudgetExceededError extends RefusalError {
  constructor(message: string, headers: Record<string, string>) {
    // 402: the SDKs raise it without retrying, which is what a spend limit needs.
    super(402, message, { code: 'budget_exceeded', headers });
  }
}

/**
 * A budget applies to the request and its model has no price, so its spend could not be counted;
 * nothing was sent upstream.
 */
export class UnpricedModelError extends RefusalError {
  constructor(message: string, headers: Record<string, string>) {
    super(402, message, { code: 'model_not_priced', headers });
  }
}

export class UpstreamUnreachableError extends ProxyError {
  /**
   * `staleSocket`: the connection was a kept-alive one, reset before any byte
   * of an answer — the provider closed it while idle and never read the request.
   */
  constructor(
    cause: unknown,
    readonly staleSocket = false,
  ) {
    super(502, 'The upstream provider could not be reached.', { cause });
  }
}

export class UpstreamTimeoutError extends ProxyError {
  constructor(timeoutMs: number) {
    super(504, `The upstream provider did not respond within ${timeoutMs / 1000} seconds.`);
  }
}

/** The provider compressed its answer in a coding the proxy cannot decode (it asks only for ones it can): the body could hold a credential, so it is not passed on. */
/** What a coding's name looks like (`compress`, `aes128gcm`): anything else is not quoted, it could be any text the provider echoed. */
const CODING_NAME = /^[a-z0-9][a-z0-9.+-]{0,15}$/;

export class UpstreamEncodingError extends ProxyError {
  constructor(coding: string) {
    const named = CODING_NAME.test(coding) ? `content-encoding "${coding}"` : 'a content-encoding';
    super(
      502,
      `The upstream provider answered in ${named}, which the proxy cannot decode; the answer was not passed on.`,
    );
  }
}

/** The client went away before the provider answered; the upstream call was stopped. */
export class ClientGoneError extends ProxyError {
  constructor() {
    super(499, 'client disconnected');
  }
}

/**
 * The local server was stopping and its grace period ran out: the server cut the request
 * (the client saw its connection closed). 503, as for any request the server could not finish.
 */
export class ServerStoppedError extends ProxyError {
  constructor(whileStreaming = false) {
    super(
      503,
      whileStreaming
        ? 'the server shut down mid-response and cut the request'
        : 'the server shut down before the provider answered and cut the request',
    );
  }
}

/** A stored key that no longer opens (sealed under another key, or tampered with). */
export class StoredKeyUnreadableError extends ProxyError {
  constructor(provider: string, cause: unknown) {
    super(
      500,
      `The stored ${provider} key could not be decrypted. Save it again on the Integrations page or with PUT /api/keys/${provider}.`,
      { cause },
    );
  }
}

/** A stored key that no HTTP header can carry (saved before keys were checked): it must be replaced. */
export class StoredKeyNotSendableError extends ProxyError {
  constructor(provider: string) {
    super(
      500,
      `The stored ${provider} key is not valid: it holds characters an HTTP header cannot carry (only visible ASCII can be sent). Replace it on the Integrations page or with PUT /api/keys/${provider}.`,
    );
  }
}

/**
 * A request the proxy signs with the runtime's AWS credentials, when the credential chain found none
 * (a machine without an AWS profile or keys). A 403, not a 5xx: the AWS SDK raises
 * `AccessDeniedException` and does not retry it, as retrying cannot make credentials appear.
 */
export class AwsCredentialsUnavailableError extends ProxyError {
  constructor(cause: unknown) {
    super(
      403,
      'No AWS credentials were found to sign this request with, so it was not sent. Give the proxy AWS credentials (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, before starting it; in AWS its function role signs), save an API key for this provider on the Integrations page, or send your own key (a Bedrock API key) with the proxy token in the x-proxy-token header (pass-through mode).',
      { cause },
    );
  }
}

/**
 * The store could not be reached: fail closed rather than forward unauthenticated or unmetered.
 * The message says what did not happen; the cause stays in the log, never in the answer.
 */
export class StoreUnavailableError extends ProxyError {
  constructor(cause: unknown, during: keyof typeof LEFT_UNDONE = 'proxy') {
    super(503, `The usage store is temporarily unavailable; ${LEFT_UNDONE[during]}. Retry shortly.`, {
      cause,
      headers: { 'retry-after': '1' },
    });
  }
}

const LEFT_UNDONE = {
  proxy: 'the request was not forwarded',
  // A write whose answer was lost may still have been applied, so this claims no more.
  management: 'the management request could not be completed',
};

/**
 * The identical request this one waited for (single flight) met this failure at its provider: it
 * is answered as that failure, and its row records a failed call as if it had made it itself.
 */
export class SharedForwardFailure extends Error {
  constructor(readonly failure: Error) {
    super(failure.message);
  }
}
