import { ROLES, type Role } from '../auth/roles';
import type { Deps } from '../wiring/deps';
import { AuthenticationError, NotFoundError, PermissionError } from '../base/errors';
import type { IncomingRequest } from '../http/request';
import { jsonResponse, type ProxyResponse } from '../http/response';
import type { PendingSignIn } from '../people/oidc-client';
import { endedSessionCookie, newSession, sessionCookie } from '../people/session';
import { cookieIn, openCookieValue, sealCookieValue, setCookie, type CookiePurpose } from '../people/signed-cookie';
import { cookieKeyOf } from './authorize';
import { API_PATHS } from './paths';
import type { ApiRoute } from './route-types';

/** The cookie that carries a sign-in in progress (PKCE verifier, state, nonce) to the callback, and no further. */
const SIGN_IN_COOKIE = 'proxy_sign_in';
const SIGN_IN_SECONDS = 10 * 60;

interface PendingCookie extends PendingSignIn {
  /** The account asked for (`?account=`), if any. */
  account?: string;
  exp: number;
}

function configuredSignIn(deps: Deps) {
  if (!deps.signIn)
    throw new NotFoundError('Sign-in with an identity provider is not set up on this proxy (docs/people.md).');
  return deps.signIn;
}

/** The key for one of sign-in's cookies: sign-in signs none without the admin key. */
async function signInCookieKey(deps: Deps, purpose: CookiePurpose): Promise<Buffer> {
  const key = await cookieKeyOf(deps, purpose);
  if (!key) throw new NotFoundError('Sign-in needs the admin key to be set.');
  return key;
}

/** The callback address the issuer knows this proxy by: HTTPS in AWS; the local server serves plain HTTP. */
function callbackUrl(deps: Deps, request: IncomingRequest): string {
  const scheme = deps.config.awsSigning === 'aws-role' ? 'https' : 'http';
  return `${scheme}://${request.headers.host ?? 'localhost'}${API_PATHS.signInCallback}`;
}

const redirect = (location: string, cookie: string): ProxyResponse => ({
  statusCode: 302,
  headers: { location, 'cache-control': 'no-store' },
  body: '',
  cookies: [cookie],
});

/**
 * The account and role a person's groups give: the account asked for, else the first (by id) that
 * maps one of the groups; within it, the highest role any of the groups holds.
 */
async function roleOf(deps: Deps, groups: string[], account?: string): Promise<{ accountId: string; role: Role }> {
  const mapped = (await deps.groupRoles.ofGroups(groups.slice(0, 100))).filter(
    (m) => account === undefined || m.accountId === account,
  );
  if (mapped.length === 0)
    throw new PermissionError(
      'None of your groups has a role in an account of this proxy: ask an admin to map one (docs/people.md).',
    );
  const accountId = mapped.map((m) => m.accountId).sort()[0];
  const roles = mapped.filter((m) => m.accountId === accountId).map((m) => ROLES.indexOf(m.role));
  return { accountId, role: ROLES[Math.max(...roles)] };
}

/** `GET /api/session`: who the caller is, and for a person's session the CSRF token to send back. */
export interface SessionJson {
  account_id: string;
  role: Role;
  actor: string;
  actor_name: string | null;
  signed_in_with: 'oidc' | 'token';
  csrf_token: string | null;
  expires_at: string | null;
}

/** Sign-in with the OpenID Connect issuer (docs/people.md): start, callback, sign-out, and who the caller is. */
export const signInRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.signInConfig,
    access: 'public',
    handle: ({ deps }) => jsonResponse(200, { oidc: Boolean(deps.signIn) }),
  },
  {
    method: 'GET',
    path: API_PATHS.signIn,
    access: 'public',
    async handle({ deps, request }) {
      const { location, pending } = await configuredSignIn(deps).start(callbackUrl(deps, request));
      const account = request.query.get('account') || undefined;
      const value: PendingCookie = { ...pending, account, exp: Math.floor(deps.now() / 1000) + SIGN_IN_SECONDS };
      const cookie = setCookie(SIGN_IN_COOKIE, sealCookieValue(await signInCookieKey(deps, 'sign-in'), value), {
        path: API_PATHS.signInCallback,
        maxAgeSeconds: SIGN_IN_SECONDS,
      });
      return redirect(location, cookie);
    },
  },
  {
    method: 'GET',
    path: API_PATHS.signInCallback,
    access: 'public',
    async handle({ deps, request }) {
      const signIn = configuredSignIn(deps);
      const sealed = cookieIn(request.headers.cookie, SIGN_IN_COOKIE);
      const pending =
        sealed && openCookieValue<PendingCookie>(await signInCookieKey(deps, 'sign-in'), sealed, deps.now());
      if (!pending) throw new AuthenticationError('This sign-in expired or was started elsewhere: sign in again.');
      const person = await signIn
        .finish(new URL(`${callbackUrl(deps, request)}?${request.rawQuery}`), pending)
        .catch((error: unknown) => {
          deps.log.warn('sign-in refused', { error: error instanceof Error ? error.message : String(error) });
          throw new AuthenticationError('The identity provider did not confirm this sign-in: sign in again.');
        });
      const { accountId, role } = await roleOf(deps, person.groups, pending.account);
      const key = await signInCookieKey(deps, 'session');
      const session = newSession({ accountId, role, actor: `person:${person.subject}`, name: person.name }, deps.now());
      deps.log.info('signed in', { account_id: accountId, role, actor: session.actor });
      return redirect('/', sessionCookie(key, session));
    },
  },
  {
    method: 'POST',
    path: API_PATHS.signOut,
    access: 'public',
    handle: () => ({
      statusCode: 204,
      headers: { 'cache-control': 'no-store' },
      body: '',
      cookies: [endedSessionCookie()],
    }),
  },
  {
    method: 'GET',
    path: API_PATHS.session,
    access: 'manage',
    role: 'viewer',
    handle({ caller, session }) {
      const body: SessionJson = {
        account_id: caller.accountId,
        role: caller.role,
        actor: caller.actor,
        actor_name: caller.actorName ?? null,
        signed_in_with: session ? 'oidc' : 'token',
        // The page sends it back in x-csrf-token on each change; no other site can read it.
        csrf_token: session?.csrf ?? null,
        expires_at: session ? new Date(session.exp * 1000).toISOString() : null,
      };
      return jsonResponse(200, body, { 'cache-control': 'no-store' });
    },
  },
];
