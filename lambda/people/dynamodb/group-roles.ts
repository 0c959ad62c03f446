import { accountPk, itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { isRole } from '../../auth/roles';
import type { GroupRole, GroupRoleStore } from '../ports';

const GROUP_PREFIX = 'GROUP#';
/** Sign-in looks a group up by its name alone, so each mapping is also kept in the group's own partition. */
const groupPk = (group: string) => `${GROUP_PREFIX}${group}`;

function toMapping(item: Record<string, unknown>): GroupRole | undefined {
  const { account_id: accountId, group, role, updated_at: updatedAt } = item;
  if (typeof accountId !== 'string' || typeof group !== 'string' || !isRole(role)) return undefined;
  return { accountId, group, role, updatedAt: String(updatedAt) };
}

/**
 * Two items per mapping, written and removed together: one in the account's partition
 * (`ACCOUNT#<id>`, `GROUP#<group>`) for the account's list, one in the group's (`GROUP#<group>`,
 * `ACCOUNT#<id>`) for sign-in, which knows only the person's groups.
 */
export class DynamoGroupRoles implements GroupRoleStore {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  private async get(accountId: string, group: string): Promise<GroupRole | undefined> {
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: { TableName: this.table, Key: { pk: accountPk(accountId), sk: groupPk(group) }, ConsistentRead: true },
    });
    return Item ? toMapping(Item) : undefined;
  }

  async put(mapping: GroupRole): Promise<GroupRole | undefined> {
    const before = await this.get(mapping.accountId, mapping.group);
    const fields = {
      account_id: mapping.accountId,
      group: mapping.group,
      role: mapping.role,
      updated_at: mapping.updatedAt,
    };
    await this.doc.send({
      operation: 'TransactWriteItems',
      input: {
        TransactItems: [
          {
            Put: {
              TableName: this.table,
              Item: { pk: accountPk(mapping.accountId), sk: groupPk(mapping.group), ...fields },
            },
          },
          {
            Put: {
              TableName: this.table,
              Item: { pk: groupPk(mapping.group), sk: accountPk(mapping.accountId), ...fields },
            },
          },
        ],
      },
    });
    return before;
  }

  async remove(accountId: string, group: string): Promise<GroupRole | undefined> {
    const before = await this.get(accountId, group);
    if (!before) return undefined;
    await this.doc.send({
      operation: 'TransactWriteItems',
      input: {
        TransactItems: [
          { Delete: { TableName: this.table, Key: { pk: accountPk(accountId), sk: groupPk(group) } } },
          { Delete: { TableName: this.table, Key: { pk: groupPk(group), sk: accountPk(accountId) } } },
        ],
      },
    });
    return before;
  }

  async list(accountId: string): Promise<GroupRole[]> {
    const items = await itemsUnderPrefix(this.doc, { table: this.table, accountId, prefix: GROUP_PREFIX });
    return items.flatMap((item) => toMapping(item) ?? []);
  }

  async ofGroups(groups: readonly string[]): Promise<GroupRole[]> {
    const found = await Promise.all(
      groups.map(async (group) => {
        const { Items } = await this.doc.send({
          operation: 'Query',
          input: {
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': groupPk(group) },
            ConsistentRead: true,
          },
        });
        return (Items ?? []).flatMap((item) => toMapping(item) ?? []);
      }),
    );
    return found.flat();
  }
}
