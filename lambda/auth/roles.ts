/**
 * Roles within an account (docs/people.md): what a person or a token may do in the management API.
 * Ordered: each role may do all that the ones before it may.
 */
export const ROLES = ['viewer', 'member', 'admin'] as const;

export type Role = (typeof ROLES)[number];

/** Whether `role` may do what `needed` may. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * Who makes a management request: a token or a signed-in person, in one account, with one role.
 * `actor` is what the audit log records (`token:<id>` or `person:<issuer subject>`).
 */
export interface Caller {
  accountId: string;
  role: Role;
  actor: string;
  /** The token the request was made with; absent for a person's session. */
  tokenId?: string;
  /** A signed-in person's name or e-mail, as the identity provider gave it. */
  actorName?: string;
}

/** The actor id of a token (what `createdBy` and the audit log hold). */
export const tokenActor = (tokenId: string) => `token:${tokenId}`;
