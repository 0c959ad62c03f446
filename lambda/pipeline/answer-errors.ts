import { FAILED_SIGN_IN_MESSAGE, type FailedSignIns } from '../auth/failed-sign-ins';
import { AuthenticationError, ProxyError, StoreUnavailableError } from '../base/errors';
import type { ProxyResponse } from '../http/response';
import { describeError, type Logger } from '../base/logger';
import { chatDialect } from '../providers/dialects/chat';
import type { Dialect } from '../providers/types';
import { redactText } from '../streaming/redact';
import { finishResponse } from './finish-response';
import { requestSecrets } from './request-secrets';
import type { Answering } from './state';

/** How an error body is written: an endpoint's dialect, or the management API's shape. */
export type ErrorShape = Pick<Dialect, 'errorBody'> & Partial<Pick<Dialect, 'errorHeaders'>>;

/**
 * The one place errors become responses: a typed error keeps its status and
 * message, in the endpoint's own error shape; anything else is a 500 whose
 * details stay in the log. `state` is what the request had proved when it failed
 * (nothing, when its event could not be decoded). A store call that failed is a 503 only
 * when the store is unavailable for now (as `isStoreOutage` tells it); the store refusing a
 * malformed call is a bug on the proxy's side, and a 500. `shape` renders the body when it is not
 * the endpoint's (the management API's own, api/error-shape.ts). A failed authentication is
 * counted and, from a source that keeps failing, answered after a short hold.
 */
export function answerErrors(
  log: Logger,
  isStoreOutage: (error: unknown) => boolean,
  failedSignIns: FailedSignIns,
  shape?: ErrorShape,
): (state: Answering | undefined, error: unknown) => ProxyResponse | Promise<ProxyResponse> {
  const answer = answerWith(log, isStoreOutage, shape);
  return function answerError(state, error) {
    if (!(error instanceof AuthenticationError)) return answer(state, error);
    return answerFailedSignIn(log, failedSignIns, state, () => answer(state, error));
  };
}

/**
 * A failed authentication (proxy token, admin key, management sign-in): one log line an alarm
 * counts (`authentication failed`; never the credential), and, once its source keeps failing,
 * the answer held for a short while. A correct credential never comes here, so it never waits.
 */
async function answerFailedSignIn(
  log: Logger,
  failedSignIns: FailedSignIns,
  state: Answering | undefined,
  answer: () => ProxyResponse,
): Promise<ProxyResponse> {
  const source = state?.request.sourceIp ?? 'unknown';
  const { failures, delayMs } = failedSignIns.failed(source);
  log.warn(FAILED_SIGN_IN_MESSAGE, {
    request_id: state?.request.id,
    credential: credentialKind(state?.request.path ?? ''),
    source_ip: source,
    failures,
    delay_ms: delayMs,
  });
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  return answer();
}

/** Which credential a path takes: the admin key, a token signing in to manage, or a proxy token. */
function credentialKind(path: string): 'admin key' | 'manage token' | 'proxy token' {
  if (path.startsWith('/api/admin/')) return 'admin key';
  if (path.startsWith('/api/') && !path.startsWith('/api/proxy/')) return 'manage token';
  return 'proxy token';
}

function answerWith(
  log: Logger,
  isStoreOutage: (error: unknown) => boolean,
  shape?: ErrorShape,
): (state: Answering | undefined, error: unknown) => ProxyResponse {
  return function answerError(state, error) {
    const dialect: ErrorShape = shape ?? state?.dialect ?? chatDialect;
    const storeBug = error instanceof StoreUnavailableError && !isStoreOutage(error.cause);
    const known = error instanceof ProxyError && !storeBug ? error : undefined;
    // A message may quote what the client sent (a model, a tag): never a credential of the request, in the answer or the log (SECURITY.md).
    const secrets = state ? requestSecrets(state) : [];
    if (!known || known.status >= 500) {
      const described = redactText(JSON.stringify(describeError(error)), secrets);
      log.error('request failed', {
        request_id: state?.request.id,
        status: known?.status ?? 500,
        ...(JSON.parse(described) as Record<string, unknown>),
      });
    }
    const status = known?.status ?? 500;
    const message = known
      ? redactText(known.message, secrets)
      : 'Internal error in the proxy. The request id is in the x-proxy-request-id header.';
    const native = { status, message, param: known?.details.param, code: known?.details.code };
    const response: ProxyResponse = {
      statusCode: status,
      headers: { 'content-type': 'application/json', ...dialect.errorHeaders?.(native), ...known?.details.headers },
      body: dialect.errorBody(native),
    };
    return finishResponse(state, response);
  };
}
