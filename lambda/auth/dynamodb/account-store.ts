import { tagsFrom } from '../../tags/tags';
import type { AccountStore, Scope, TokenRecord, TokenUpdate } from '../ports';
import { isRole, type Role } from '../roles';
import { accountPk, itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import { BatchedGet } from '../../store/dynamodb/batched-get';
import { idempotencyToken } from '../../store/dynamodb/idempotency-token';
import { shardCount } from '../sliding-minute';
import {
  gateKey,
  gateOfNewToken,
  gateRevocation,
  fallbacksFrom,
  gateSettings,
  limitsFrom,
  settingsOf,
  settingsUpdate,
} from './gate-item';
import { cancellationReasons, conditionFailedItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

type TransactUpdate = NonNullable<NonNullable<TransactWriteCommandInput['TransactItems']>[number]['Update']>;

/**
 * Accounts and tokens live in one partition per account (`pk = ACCOUNT#<id>`),
 * so a token found by the account id it carries is one GetItem, and listing an
 * account's tokens is one Query. Each token has a gate item in the rate-limits table
 * (token-gate.ts) that the proxy path reads instead; issuing and revoking write both at once.
 */
const TOKEN_PREFIX = 'TOKEN#';

interface TokenItem {
  pk: string;
  sk: string;
  token_id: string;
  name?: string;
  scopes: Scope[];
  secret_hash: string;
  created_at: string;
  revoked_at?: string;
  tags?: unknown;
  role?: Role;
  created_by?: string;
}

function toRecord(accountId: string, item: TokenItem): TokenRecord {
  return {
    accountId,
    tokenId: item.token_id,
    name: item.name,
    scopes: item.scopes,
    secretHash: item.secret_hash,
    createdAt: item.created_at,
    revokedAt: item.revoked_at,
    tags: tagsFrom(item.tags),
    limits: limitsFrom(item as unknown as Record<string, unknown>),
    fallbacks: fallbacksFrom(item as unknown as Record<string, unknown>),
    role: isRole(item.role) ? item.role : undefined,
    createdBy: item.created_by,
  };
}

export class DynamoAccountStore implements AccountStore {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    /** The rate-limits table, where each token's gate item lives. */
    private readonly gateTable: string,
    private readonly reads: BatchedGet = new BatchedGet(doc, table, ['pk', 'sk']),
    private readonly gateReads: BatchedGet = new BatchedGet(doc, gateTable, ['counter_key']),
    /** The proxy's default requests per minute, so a new token's gate is ready for its first request. */
    private readonly defaultLimit?: number,
  ) {}

  async createAccount(input: { accountId: string; name?: string; createdAt: string }): Promise<void> {
    try {
      await this.doc.send({
        operation: 'PutItem',
        input: {
          TableName: this.table,
          Item: {
            pk: accountPk(input.accountId),
            sk: 'ACCOUNT',
            account_id: input.accountId,
            name: input.name,
            created_at: input.createdAt,
          },
          // Account ids are random; refusing to overwrite makes a collision loud instead of silent.
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
    } catch (error) {
      // Sent again after its answer was lost, the put finds the item it wrote itself: that is success.
      const found = conditionFailedItem(error);
      if (found && found.created_at === input.createdAt && found.name === input.name) return;
      throw error;
    }
  }

  async accountExists(accountId: string): Promise<boolean> {
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: { TableName: this.table, Key: { pk: accountPk(accountId), sk: 'ACCOUNT' } },
    });
    return Boolean(Item);
  }

  async putToken(token: TokenRecord): Promise<void> {
    const item: TokenItem = {
      pk: accountPk(token.accountId),
      sk: TOKEN_PREFIX + token.tokenId,
      token_id: token.tokenId,
      name: token.name,
      scopes: token.scopes,
      secret_hash: token.secretHash,
      created_at: token.createdAt,
      role: token.role,
      created_by: token.createdBy,
      ...settingsOf(token),
    };
    await this.doc.send({
      operation: 'TransactWriteItems',
      input: {
        ClientRequestToken: idempotencyToken(token.tokenId),
        TransactItems: [
          { Put: { TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
          ...gateOfNewToken(token, this.defaultLimit).map((Item) => ({
            Put: { TableName: this.gateTable, Item, ConditionExpression: 'attribute_not_exists(counter_key)' },
          })),
        ],
      },
    });
  }

  async getToken(accountId: string, tokenId: string): Promise<TokenRecord | undefined> {
    // Consistent, so a revocation takes effect on the very next request.
    const item = await this.reads.get({ pk: accountPk(accountId), sk: TOKEN_PREFIX + tokenId });
    return item ? toRecord(accountId, item as unknown as TokenItem) : undefined;
  }

  async listTokens(accountId: string): Promise<TokenRecord[]> {
    const items = await itemsUnderPrefix(this.doc, { table: this.table, accountId, prefix: TOKEN_PREFIX });
    const records = items.map((item) => toRecord(accountId, item as TokenItem));
    // "Last used" is written by each proxied request's gate call, so it lives on the gate's shards: the latest of them.
    const shards = (record: TokenRecord) => shardCount(record.limits?.requestsPerMinute ?? this.defaultLimit ?? 1);
    const lastUses = await Promise.all(
      records.map(async (record) => {
        const keys = Array.from({ length: shards(record) }, (_, shard) => gateKey(record.tokenId, shard));
        const gates = await Promise.all(keys.map((key) => this.gateReads.get(key)));
        const times = gates.map((gate) => gate?.last_used_at).filter((at): at is string => typeof at === 'string');
        return times.sort().at(-1);
      }),
    );
    return records.map((record, i) => {
      const lastUsedAt = lastUses[i];
      return lastUsedAt ? { ...record, lastUsedAt } : record;
    });
  }

  async revokeToken(accountId: string, tokenId: string, revokedAt: string): Promise<boolean> {
    // With the gate's half: the very next proxied request is refused, on every instance.
    return this.updateTokenAndGate(
      accountId,
      tokenId,
      {
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :at)',
        ExpressionAttributeValues: { ':at': revokedAt },
      },
      gateRevocation(this.gateTable, tokenId, revokedAt),
    );
  }

  async updateToken(accountId: string, tokenId: string, update: TokenUpdate): Promise<boolean> {
    // With the gate's half: the very next proxied request sees the change, on every instance.
    return this.updateTokenAndGate(
      accountId,
      tokenId,
      settingsUpdate(update),
      gateSettings(this.gateTable, tokenId, update),
    );
  }

  /**
   * A change to an existing token's item and to its gate's shards, in one transaction, so no instance
   * sees one without the other. False when the token does not exist.
   */
  private async updateTokenAndGate(
    accountId: string,
    tokenId: string,
    change: Omit<TransactUpdate, 'TableName' | 'Key'>,
    gateChanges: TransactUpdate[],
  ): Promise<boolean> {
    try {
      await this.doc.send({
        operation: 'TransactWriteItems',
        input: {
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: { pk: accountPk(accountId), sk: TOKEN_PREFIX + tokenId },
                ...change,
                // Only existing tokens: an update would otherwise create an empty item.
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            ...gateChanges.map((gateChange) => ({ Update: gateChange })),
          ],
        },
      });
      return true;
    } catch (error) {
      if (cancellationReasons(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }
}
