import type { ProviderId } from '../../providers/registry';
import type { ProviderKeyStore, StoredProviderKey } from '../ports';
import { accountPk, itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import { BatchedGet } from '../../store/dynamodb/batched-get';
import type { DocumentClient } from '../../store/dynamodb/document-client';

const KEY_PREFIX = 'KEY#';

interface KeyItem {
  provider: ProviderId;
  ciphertext: Uint8Array;
  iv: Uint8Array;
  wrapped_key: Uint8Array;
  key_ref: string;
  hint: string;
  updated_at: string;
}

function toStored(item: KeyItem): StoredProviderKey {
  return {
    provider: item.provider,
    secret: { ciphertext: item.ciphertext, iv: item.iv, wrappedKey: item.wrapped_key, keyRef: item.key_ref },
    hint: item.hint,
    updatedAt: item.updated_at,
  };
}

/** Encrypted provider keys, one item per account and provider, beside the account's tokens. */
export class DynamoProviderKeyStore implements ProviderKeyStore {
  /** Share the account store's `BatchedGet` so a token and a key read together cost one call. */
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly reads: BatchedGet = new BatchedGet(doc, table, ['pk', 'sk']),
  ) {}

  async get(accountId: string, provider: ProviderId): Promise<StoredProviderKey | undefined> {
    const item = await this.reads.get({ pk: accountPk(accountId), sk: KEY_PREFIX + provider });
    return item ? toStored(item as unknown as KeyItem) : undefined;
  }

  async put(accountId: string, key: StoredProviderKey): Promise<void> {
    const item: KeyItem & { pk: string; sk: string } = {
      pk: accountPk(accountId),
      sk: KEY_PREFIX + key.provider,
      provider: key.provider,
      ciphertext: key.secret.ciphertext,
      iv: key.secret.iv,
      wrapped_key: key.secret.wrappedKey,
      key_ref: key.secret.keyRef,
      hint: key.hint,
      updated_at: key.updatedAt,
    };
    await this.doc.send({ operation: 'PutItem', input: { TableName: this.table, Item: item } });
  }

  async delete(accountId: string, provider: ProviderId): Promise<boolean> {
    const { Attributes } = await this.doc.send({
      operation: 'DeleteItem',
      input: {
        TableName: this.table,
        Key: { pk: accountPk(accountId), sk: KEY_PREFIX + provider },
        ReturnValues: 'ALL_OLD',
      },
    });
    return Boolean(Attributes);
  }

  async list(accountId: string): Promise<StoredProviderKey[]> {
    const items = await itemsUnderPrefix(this.doc, { table: this.table, accountId, prefix: KEY_PREFIX });
    return items.map((item) => toStored(item as KeyItem));
  }
}
