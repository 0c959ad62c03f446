import { retryPolicies, withRetries } from '../../base/retry';
import { accountPk, itemsUnderPrefix } from '../../store/dynamodb/account-partition';
import type { DocumentClient } from '../../store/dynamodb/document-client';
import { cancellationReasons } from '../../store/dynamodb/store-errors';
import { MAX_ACCOUNT_PRICES, normalModelId, type AccountPrice, type TokenRates } from '../account-price';
import type { AccountPriceStore, PutPriceOutcome } from '../ports';

const PRICE_PREFIX = 'PRICE#';
/**
 * The account's count of prices, beside them in its partition: a new price and the count's increase
 * are one transaction, conditioned on the count being under the cap, so two instances adding prices at
 * once can't pass it together. (Its sort key does not start with `PRICE#`: the list never reads it.)
 */
const COUNT_SK = 'PRICE_COUNT';
/**
 * A put that met a change of the same account (a price or the count changed in between): thrown only
 * to be tried again (`retryPolicies.changedMeanwhile`), and past the last attempt reported as such.
 */
class PricesChangedMeanwhile extends Error {}

const PUT_POLICY = retryPolicies.changedMeanwhile((error) => error instanceof PricesChangedMeanwhile);

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

const CONDITION_FAILED = 'ConditionalCheckFailed';

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

  async put(accountId: string, price: AccountPrice): Promise<PutPriceOutcome> {
    const model = normalModelId(price.model);
    const item: PriceItem & { pk: string; sk: string } = {
      pk: accountPk(accountId),
      sk: PRICE_PREFIX + model,
      model,
      ...(price.priced_as !== undefined ? { priced_as: price.priced_as } : { rates: price.rates }),
      updated_at: price.updated_at,
    };
    const attempt = async () => {
      const outcome = await this.putOnce(accountId, item);
      if (outcome === 'changed meanwhile') throw new PricesChangedMeanwhile();
      return outcome;
    };
    return withRetries(attempt, PUT_POLICY).catch((error: unknown) => {
      if (!(error instanceof PricesChangedMeanwhile)) throw error;
      throw new Error(
        `the prices of account ${accountId} kept changing during ${PUT_POLICY.attempts} attempts to set one`,
      );
    });
  }

  /** Replaces an existing price, or adds a new one with the count, under the cap. */
  private async putOnce(
    accountId: string,
    item: PriceItem & { pk: string; sk: string },
  ): Promise<PutPriceOutcome | 'changed meanwhile'> {
    const count = await this.count(accountId);
    if (count.stored === undefined && count.models.has(item.model)) return this.replace(item);
    if (count.value >= MAX_ACCOUNT_PRICES && count.stored === undefined) return 'full';
    try {
      await this.doc.send({
        operation: 'TransactWriteItems',
        input: {
          TransactItems: [
            { Put: { TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(sk)' } },
            count.stored === undefined
              ? {
                  Put: {
                    TableName: this.table,
                    Item: { pk: accountPk(accountId), sk: COUNT_SK, prices: count.value + 1 },
                    ConditionExpression: 'attribute_not_exists(sk)',
                  },
                }
              : {
                  Update: {
                    TableName: this.table,
                    Key: { pk: accountPk(accountId), sk: COUNT_SK },
                    UpdateExpression: 'SET prices = prices + :one',
                    ConditionExpression: 'prices < :max',
                    ExpressionAttributeValues: { ':one': 1, ':max': MAX_ACCOUNT_PRICES },
                  },
                },
          ],
        },
      });
      return 'stored';
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (!reasons) throw error;
      // The model has a price already: replacing it leaves the count as it is.
      if (reasons[0] === CONDITION_FAILED) return this.replace(item);
      if (reasons[1] === CONDITION_FAILED) return count.stored === undefined ? 'changed meanwhile' : 'full';
      throw error;
    }
  }

  /** Replaces a price that exists; one deleted in between is added again, counted. */
  private async replace(item: PriceItem & { pk: string; sk: string }): Promise<PutPriceOutcome | 'changed meanwhile'> {
    try {
      await this.doc.send({
        operation: 'PutItem',
        input: { TableName: this.table, Item: item, ConditionExpression: 'attribute_exists(sk)' },
      });
      return 'stored';
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return 'changed meanwhile';
      throw error;
    }
  }

  /**
   * The account's count of prices, read consistently. An account whose prices were set before the
   * count existed has none stored: its prices are counted once, and the first new price stores the count.
   */
  private async count(accountId: string): Promise<{ value: number; stored?: number; models: Set<string> }> {
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: { TableName: this.table, Key: { pk: accountPk(accountId), sk: COUNT_SK }, ConsistentRead: true },
    });
    const stored = typeof Item?.prices === 'number' ? Item.prices : undefined;
    if (stored !== undefined) return { value: stored, stored, models: new Set() };
    const items = await itemsUnderPrefix(this.doc, {
      table: this.table,
      accountId,
      prefix: PRICE_PREFIX,
      consistentRead: true,
    });
    return { value: items.length, models: new Set(items.map((found) => String(found.model))) };
  }

  async delete(accountId: string, model: string): Promise<boolean> {
    const key = { pk: accountPk(accountId), sk: PRICE_PREFIX + normalModelId(model) };
    try {
      await this.doc.send({
        operation: 'TransactWriteItems',
        input: {
          TransactItems: [
            { Delete: { TableName: this.table, Key: key, ConditionExpression: 'attribute_exists(sk)' } },
            {
              Update: {
                TableName: this.table,
                Key: { pk: accountPk(accountId), sk: COUNT_SK },
                UpdateExpression: 'SET prices = prices - :one',
                ConditionExpression: 'prices > :zero',
                ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
              },
            },
          ],
        },
      });
      return true;
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (!reasons) throw error;
      if (reasons[0] === CONDITION_FAILED) return false;
      if (reasons[1] !== CONDITION_FAILED) throw error;
    }
    // No count stored yet (prices set before it existed): the price alone goes; the count is made when next needed.
    const { Attributes } = await this.doc.send({
      operation: 'DeleteItem',
      input: { TableName: this.table, Key: key, ReturnValues: 'ALL_OLD' },
    });
    return Boolean(Attributes);
  }
}
