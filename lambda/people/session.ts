import { randomBytes } from 'node:crypto';
import type { Role } from '../auth/roles';
import { cookieIn, openCookieValue, sealCookieValue, setCookie } from './signed-cookie';

export const SESSION_COOKIE = 'proxy_session';

/** A person's session lasts this long; then they sign in again (docs/people.md). */
export const SESSION_SECONDS = 60 * 60;

/** What a session cookie carries, signed: whose it is, in which account, with which role. */
export interface Session {
  accountId: string;
  role: Role;
  /** `person:<subject at the issuer>`. */
  actor: string;
  /** E-mail or name, as the identity provider gave it. */
  name?: string;
  /** Sent back in `x-csrf-token` on every state-changing request (docs/people.md). */
  csrf: string;
  /** Epoch seconds. */
  exp: number;
}

export function newSession(input: Omit<Session, 'csrf' | 'exp'>, now: number): Session {
  return { ...input, csrf: randomBytes(24).toString('base64url'), exp: Math.floor(now / 1000) + SESSION_SECONDS };
}

export const sessionCookie = (key: Buffer, session: Session) =>
  setCookie(SESSION_COOKIE, sealCookieValue(key, session), { path: '/', maxAgeSeconds: SESSION_SECONDS });

/** The cookie that ends a session in the browser. */
export const endedSessionCookie = () => setCookie(SESSION_COOKIE, '', { path: '/', maxAgeSeconds: 0 });

/** The session a request's cookie carries, if it is genuine and current. */
export function sessionIn(key: Buffer, cookieHeader: string | undefined, now: number): Session | undefined {
  const sealed = cookieIn(cookieHeader, SESSION_COOKIE);
  return sealed ? openCookieValue<Session>(key, sealed, now) : undefined;
}
