/**
 * Sign-in's stored part (docs/people.md): which identity-provider group holds which role in which
 * account. The DynamoDB adapter is in `dynamodb/`.
 */
import type { Role } from '../auth/roles';

export interface GroupRole {
  accountId: string;
  group: string;
  role: Role;
  updatedAt: string;
}

export interface GroupRoleStore {
  /** Sets the group's role in the account; answers the mapping it replaced, if any. */
  put(mapping: GroupRole): Promise<GroupRole | undefined>;
  /** Removes the group's role in the account; answers what was removed, if anything. */
  remove(accountId: string, group: string): Promise<GroupRole | undefined>;
  list(accountId: string): Promise<GroupRole[]>;
  /** Every account and role these groups hold, whichever account mapped them. */
  ofGroups(groups: readonly string[]): Promise<GroupRole[]>;
}
