import { admitSignIn } from '../auth/failed-sign-ins';
import { hashSecret, parseToken, secretsEqual } from '../auth/proxy-token';
import { credentialIn, verifyToken } from '../auth/verify';
import type { Deps } from '../wiring/deps';
import { AuthenticationError, StoreUnavailableError } from '../base/errors';
import type { IncomingRequest } from '../http/request';
import type { TokenRecord } from '../auth/ports';

const bearer = (request: IncomingRequest) => credentialIn(request.headers.authorization, 'Bearer');

/**
 * Admin routes: the deployment's admin key, compared in constant time. Like every credential
 * check, it is refused unchecked (429) from an address that has had too many wrong ones lately.
 */
export async function requireAdmin(deps: Deps, request: IncomingRequest): Promise<void> {
  const presented = bearer(request);
  if (!presented) throw new AuthenticationError('Missing admin key: send Authorization: Bearer <admin key>.');
  const check = admitSignIn(deps.failedSignIns, request.sourceIp, presented);
  try {
    // The admin secret's store (Secrets Manager in AWS) failing is an outage whatever the error.
    const adminKey = await deps.adminKey().catch((error) => {
      throw new StoreUnavailableError(error, 'management');
    });
    if (!adminKey || !secretsEqual(presented, adminKey)) throw new AuthenticationError('Invalid admin key.');
  } finally {
    check.done();
  }
}

/** Account routes: a live proxy token with the `manage` scope. */
export async function requireManageToken(deps: Deps, request: IncomingRequest): Promise<TokenRecord> {
  const presented = bearer(request);
  if (!presented)
    throw new AuthenticationError('Missing token: send Authorization: Bearer <proxy token with the manage scope>.');
  const parsed = parseToken(presented);
  if (!parsed) throw new AuthenticationError('Invalid proxy token.');
  const check = admitSignIn(deps.failedSignIns, request.sourceIp, presented);
  try {
    // A store failure here is answered by the router, like one in the route itself.
    const record = await deps.accounts.getToken(parsed.accountId, parsed.tokenId);
    return verifyToken(hashSecret(parsed.secret), record, 'manage');
  } finally {
    check.done();
  }
}
