import { accountPk, itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { normalModelId, type AccountPrice, type TokenRates } from '../account-price';
import type { AccountPriceStore } from '../ports';

const PRICE_PREFIX = 'PRICE#';

interface PriceItem {
  model: string;
  rates?: TokenRates;
  priced_as?: string;
  updated_at: string;
}

function toPrice(item: PriceItem): AccountPrice {
  const base = { model: item.model, updated_at: item.updated_at };
  return item.priced_as !== undefined ? { ...base, priced_as: item.priced_as } : { ...base, rates: item.rates! };
}

/** Account prices, one item per account and model id or pattern, in the account's partition beside its keys. */
export class DynamoAccountPriceStore implements AccountPriceStore {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  async list(accountId: string): Promise<AccountPrice[]> {
    const items = await itemsUnderPrefix(this.doc, { table: this.table, accountId, prefix: PRICE_PREFIX });
    return items.map((item) => toPrice(item as PriceItem));
  }

  async put(accountId: string, price: AccountPrice): Promise<void> {
    const model = normalModelId(price.model);
    const item: PriceItem & { pk: string; sk: string } = {
      pk: accountPk(accountId),
      sk: PRICE_PREFIX + model,
      model,
      ...(price.priced_as !== undefined ? { priced_as: price.priced_as } : { rates: price.rates }),
      updated_at: price.updated_at,
    };
    await this.doc.send({ operation: 'PutItem', input: { TableName: this.table, Item: item } });
  }

  async delete(accountId: string, model: string): Promise<boolean> {
    const { Attributes } = await this.doc.send({
      operation: 'DeleteItem',
      input: {
        TableName: this.table,
        Key: { pk: accountPk(accountId), sk: PRICE_PREFIX + normalModelId(model) },
        ReturnValues: 'ALL_OLD',
      },
    });
    return Boolean(Attributes);
  }
}
