import type { ProviderId } from '../../providers/registry';
import {
  DEFAULT_KEY_LABEL,
  poolOrder,
  type KeyMark,
  type KeyVersion,
  type ProviderKeyStore,
  type StoredProviderKey,
} from '../ports';
import { accountPk, itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import type { DocumentClient } from '../../store/dynamodb/document-client';

const KEY_PREFIX = 'KEY#';

interface KeyItem {
  provider: ProviderId;
  /** Absent on keys saved before pools: they are the `default` key. */
  label?: string;
  ciphertext: Uint8Array;
  iv: Uint8Array;
  wrapped_key: Uint8Array;
  key_ref: string;
  hint: string;
  updated_at: string;
  mark_state?: KeyMark['state'];
  mark_until?: number;
}

/** A provider's `default` key keeps the sort key it had before pools (`KEY#prov-b`); another label follows it (`KEY#prov-b#backup`). */
const keySk = (provider: ProviderId, label: string) =>
  label === DEFAULT_KEY_LABEL ? KEY_PREFIX + provider : `${KEY_PREFIX}${provider}#${label}`;

function markOf(item: KeyItem): KeyMark | undefined {
  if (item.mark_state === 'failing') return { state: 'failing' };
  if (item.mark_state === 'cooling' && typeof item.mark_until === 'number')
    return { state: 'cooling', until: item.mark_until };
  return undefined;
}

function toStored(item: KeyItem): StoredProviderKey {
  const mark = markOf(item);
  return {
    provider: item.provider,
    label: item.label ?? DEFAULT_KEY_LABEL,
    secret: { ciphertext: item.ciphertext, iv: item.iv, wrappedKey: item.wrapped_key, keyRef: item.key_ref },
    hint: item.hint,
    updatedAt: item.updated_at,
    ...(mark ? { mark } : {}),
  };
}

/**
 * Encrypted provider keys, one item per account, provider and label, beside the account's tokens.
 * A key's cool-down or failure is kept on its own item, so the pool read every instance already
 * makes (cached per instance) brings it along.
 */
export class DynamoProviderKeyStore implements ProviderKeyStore {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  async pool(accountId: string, provider: ProviderId): Promise<StoredProviderKey[]> {
    const items = await itemsUnderPrefix(this.doc, {
      table: this.table,
      accountId,
      prefix: KEY_PREFIX + provider,
      // A key saved a moment ago through this instance's API is used by the next request.
      consistentRead: true,
      // The prefix alone would also match a provider whose id starts with this one's.
      filter: { expression: 'provider = :provider', values: { ':provider': provider } },
    });
    return items.map((item) => toStored(item as unknown as KeyItem)).sort(poolOrder);
  }

  async put(accountId: string, key: StoredProviderKey): Promise<void> {
    // The whole item is replaced: a re-saved key starts with no mark.
    const item: KeyItem & { pk: string; sk: string } = {
      pk: accountPk(accountId),
      sk: keySk(key.provider, key.label),
      provider: key.provider,
      ...(key.label === DEFAULT_KEY_LABEL ? {} : { label: key.label }),
      ciphertext: key.secret.ciphertext,
      iv: key.secret.iv,
      wrapped_key: key.secret.wrappedKey,
      key_ref: key.secret.keyRef,
      hint: key.hint,
      updated_at: key.updatedAt,
    };
    await this.doc.send({ operation: 'PutItem', input: { TableName: this.table, Item: item } });
  }

  async delete(accountId: string, provider: ProviderId, label: string): Promise<boolean> {
    const { Attributes } = await this.doc.send({
      operation: 'DeleteItem',
      input: {
        TableName: this.table,
        Key: { pk: accountPk(accountId), sk: keySk(provider, label) },
        ReturnValues: 'ALL_OLD',
      },
    });
    return Boolean(Attributes);
  }

  async list(accountId: string): Promise<StoredProviderKey[]> {
    const items = await itemsUnderPrefix(this.doc, { table: this.table, accountId, prefix: KEY_PREFIX });
    return items.map((item) => toStored(item as unknown as KeyItem));
  }

  async mark(accountId: string, key: KeyVersion, mark: KeyMark): Promise<void> {
    try {
      await this.doc.send({
        operation: 'UpdateItem',
        input: {
          TableName: this.table,
          Key: { pk: accountPk(accountId), sk: keySk(key.provider, key.label) },
          UpdateExpression:
            mark.state === 'cooling'
              ? 'SET mark_state = :state, mark_until = :until'
              : 'SET mark_state = :state REMOVE mark_until',
          // Only the version the provider answered: a key saved again (or removed) meanwhile starts clean.
          ConditionExpression: 'updated_at = :version',
          ExpressionAttributeValues: {
            ':state': mark.state,
            ':version': key.updatedAt,
            ...(mark.state === 'cooling' ? { ':until': mark.until } : {}),
          },
        },
      });
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    }
  }
}
