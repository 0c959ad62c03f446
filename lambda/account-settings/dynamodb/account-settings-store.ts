import { retryPolicies, withRetries } from '../../base/retry';
import { accountPk } from '../../store/dynamodb/account-partition';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { NO_FAILOVER_SETTINGS, type AccountFailover, type FallbackDefaults } from '../failover-settings';
import type { AccountSettingsStore } from '../ports';

/** The item beside the account's own, in its partition. */
const SETTINGS_SK = 'FAILOVER';

/** A write that met another change of the same settings: thrown only to be tried again on what that stored. */
class SettingsChangedMeanwhile extends Error {}
const UPDATE_POLICY = retryPolicies.changedMeanwhile((error) => error instanceof SettingsChangedMeanwhile);

function toSettings(item: Record<string, unknown> | undefined): AccountFailover {
  if (!item) return NO_FAILOVER_SETTINGS;
  const fallbacks = item.fallbacks && typeof item.fallbacks === 'object' ? (item.fallbacks as FallbackDefaults) : {};
  const ms = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return {
    fallbacks,
    ...(ms(item.first_token_timeout_ms) !== undefined ? { firstTokenMs: ms(item.first_token_timeout_ms) } : {}),
    ...(ms(item.stall_timeout_ms) !== undefined ? { stallMs: ms(item.stall_timeout_ms) } : {}),
  };
}

/**
 * An account's failover settings, one item (`FAILOVER`) in its partition of the accounts table: one
 * GetItem reads them all. A change is a read and a put conditioned on the version read, so two
 * changes made at once through two instances both land.
 */
export class DynamoAccountSettingsStore implements AccountSettingsStore {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  async get(accountId: string): Promise<AccountFailover> {
    return toSettings(await this.read(accountId, false));
  }

  async update(accountId: string, edit: (current: AccountFailover) => AccountFailover) {
    const attempt = async () => {
      const item = await this.read(accountId, true);
      const before = toSettings(item);
      const after = edit(before);
      const version = typeof item?.version === 'number' ? item.version : undefined;
      try {
        await this.doc.send({
          operation: 'PutItem',
          input: {
            TableName: this.table,
            Item: {
              pk: accountPk(accountId),
              sk: SETTINGS_SK,
              fallbacks: after.fallbacks,
              first_token_timeout_ms: after.firstTokenMs,
              stall_timeout_ms: after.stallMs,
              version: (version ?? 0) + 1,
            },
            ConditionExpression: version === undefined ? 'attribute_not_exists(sk)' : 'version = :version',
            ...(version === undefined ? {} : { ExpressionAttributeValues: { ':version': version } }),
          },
        });
      } catch (error) {
        if ((error as { name?: string }).name === 'ConditionalCheckFailedException')
          throw new SettingsChangedMeanwhile();
        throw error;
      }
      return { before, after };
    };
    return withRetries(attempt, UPDATE_POLICY).catch((error: unknown) => {
      if (!(error instanceof SettingsChangedMeanwhile)) throw error;
      throw new Error(
        `the failover settings of account ${accountId} kept changing during ${UPDATE_POLICY.attempts} attempts`,
      );
    });
  }

  private async read(accountId: string, consistent: boolean) {
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: {
        TableName: this.table,
        Key: { pk: accountPk(accountId), sk: SETTINGS_SK },
        ...(consistent ? { ConsistentRead: true } : {}),
      },
    });
    return Item;
  }
}
