/**
 * The audit log (docs/people.md): one entry per management change, appended and never changed.
 * The DynamoDB adapter is in `dynamodb/`; the management API records through `AuditLog.append`.
 */

/** What changed. Each name is `<thing>.<what happened to it>`. */
export const AUDIT_ACTIONS = [
  'account.created',
  'key.saved',
  'key.removed',
  'budget.set',
  'budget.removed',
  'price.set',
  'price.removed',
  'fallbacks.set',
  'fallbacks.removed',
  'fallbacks.limits',
  'webhook.set',
  'webhook.removed',
  'token.issued',
  'token.revoked',
  'token.tags',
  'token.limits',
  'token.fallbacks',
  'role.mapped',
  'role.unmapped',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** A JSON value as an entry keeps it: what a setting was and became, never a secret. */
export type AuditValue = string | number | boolean | null | AuditValue[] | { [key: string]: AuditValue | undefined };

export interface AuditEntry {
  accountId: string;
  /** Random, so two changes in the same millisecond are two entries. */
  id: string;
  /** ISO 8601, when the change was made. */
  at: string;
  /** Who: `token:<id>`, `person:<issuer subject>` or `admin-key`. */
  actor: string;
  /** A signed-in person's e-mail or name, as the identity provider gave it. */
  actorName?: string;
  /** The caller's address, as the function URL saw it. */
  address?: string;
  action: AuditAction;
  /** What was changed: a provider, token id, model, budget subject, group, or the account. */
  target: string;
  before?: AuditValue;
  after?: AuditValue;
}

export interface AuditQuery {
  limit: number;
  cursor?: string;
  /** ISO times; `to` excluded. */
  from?: string;
  to?: string;
  actor?: string;
  action?: AuditAction;
}

export interface AuditLog {
  /** Adds one entry; never overwrites one. */
  append(entry: AuditEntry): Promise<void>;
  /** An account's entries, newest first, a page at a time. */
  list(accountId: string, query: AuditQuery): Promise<{ items: AuditEntry[]; nextCursor: string | null }>;
}
