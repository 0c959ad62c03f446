import { admitSignIn } from '../auth/failed-sign-ins';
import { hashSecret, parseToken, secretsEqual } from '../auth/proxy-token';
import { credentialIn, verifyToken } from '../auth/verify';
import { roleAllows, tokenActor, type Caller, type Role } from '../auth/roles';
import type { Deps } from '../wiring/deps';
import { AuthenticationError, PermissionError, StoreUnavailableError } from '../base/errors';
import type { IncomingRequest } from '../http/request';
import { sessionIn, type Session } from '../people/session';
import { cookieKey, type CookiePurpose } from '../people/signed-cookie';

const bearer = (request: IncomingRequest) => credentialIn(request.headers.authorization, 'Bearer');

/** The admin key, whose store (Secrets Manager in AWS) failing is an outage whatever the error. */
async function adminKeyOf(deps: Deps): Promise<string | undefined> {
  return deps.adminKey().catch((error) => {
    throw new StoreUnavailableError(error, 'management');
  });
}

/**
 * Admin routes: the deployment's admin key, compared in constant time. Like every credential
 * check, it is refused unchecked (429) from an address that has had too many wrong ones lately.
 */
export async function requireAdmin(deps: Deps, request: IncomingRequest): Promise<void> {
  const presented = bearer(request);
  if (!presented) throw new AuthenticationError('Missing admin key: send Authorization: Bearer <admin key>.');
  const check = admitSignIn(deps.failedSignIns, request.sourceIp, presented);
  let passed = false;
  try {
    const adminKey = await adminKeyOf(deps);
    if (!adminKey || !secretsEqual(presented, adminKey)) throw new AuthenticationError('Invalid admin key.');
    passed = true;
  } finally {
    check.done(passed);
  }
}

/**
 * The key that signs and opens one kind of cookie, a session's or a sign-in's in progress (derived
 * from the admin key, a key of its own for each; none without one).
 */
export async function cookieKeyOf(deps: Deps, purpose: CookiePurpose): Promise<Buffer | undefined> {
  const adminKey = await adminKeyOf(deps);
  return adminKey ? cookieKey(adminKey, purpose) : undefined;
}

/** The signed-in person's session, when the request carries a genuine, current one. */
async function sessionOf(deps: Deps, request: IncomingRequest): Promise<Session | undefined> {
  if (!request.headers.cookie) return undefined;
  const key = await cookieKeyOf(deps, 'session');
  return key && sessionIn(key, request.headers.cookie, deps.now());
}

/** Methods that change nothing, which a session may send without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * The caller of an account route, and for a signed-in person the session it was read from: the
 * cookie is opened once a request, and a route that shows the session (`GET /api/session`) takes it from here.
 */
export interface CheckedCaller {
  caller: Caller;
  session?: Session;
}

/** A person's session as the caller, its CSRF token checked on every state-changing request. */
async function sessionCaller(deps: Deps, request: IncomingRequest): Promise<CheckedCaller> {
  const session = await sessionOf(deps, request);
  if (!session)
    throw new AuthenticationError(
      'Missing token: send Authorization: Bearer <proxy token with the manage scope>, or sign in.',
    );
  if (!SAFE_METHODS.has(request.method)) {
    const csrf = request.headers['x-csrf-token'];
    if (!csrf || !secretsEqual(csrf, session.csrf))
      throw new PermissionError('Missing or wrong x-csrf-token: send the one GET /api/session answers with.');
  }
  return {
    caller: { accountId: session.accountId, role: session.role, actor: session.actor, actorName: session.name },
    session,
  };
}

/**
 * Account routes: a live proxy token with the `manage` scope (a token without a role is an admin,
 * as before roles), or a signed-in person's session cookie. A session's state-changing request must
 * also send the session's CSRF token in `x-csrf-token`: a page on another site can make the browser
 * send the cookie, but cannot read the token nor set the header (docs/people.md).
 */
export async function requireCaller(deps: Deps, request: IncomingRequest): Promise<CheckedCaller> {
  const presented = bearer(request);
  if (!presented) return sessionCaller(deps, request);
  const parsed = parseToken(presented);
  if (!parsed) throw new AuthenticationError('Invalid proxy token.');
  const check = admitSignIn(deps.failedSignIns, request.sourceIp, presented);
  let passed = false;
  try {
    // A store failure here is answered by the router, like one in the route itself.
    const record = await deps.accounts.getToken(parsed.accountId, parsed.tokenId);
    const token = verifyToken(hashSecret(parsed.secret), record, 'manage');
    passed = true;
    return {
      caller: {
        accountId: token.accountId,
        role: token.role ?? 'admin',
        actor: tokenActor(token.tokenId),
        tokenId: token.tokenId,
      },
    };
  } finally {
    check.done(passed);
  }
}

/** What a role may not do, said in the management API's 403 (docs/people.md). */
export function requireRole(caller: Caller, needed: Role): void {
  if (!roleAllows(caller.role, needed))
    throw new PermissionError(
      `This needs the ${needed} role in the account; the caller is a ${caller.role}${caller.role === 'viewer' ? ', who may only read' : ''}.`,
    );
}
