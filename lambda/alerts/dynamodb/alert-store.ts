import { alertKey, type AlertPayload, type BudgetAlert } from '../alert';
import type {
  AlertClaim,
  AlertState,
  AlertStore,
  AlertWebhook,
  DeliveryOutcome,
  SentAlert,
  WebhookSecretSealer,
} from '../ports';
import { resetsAt } from '../../budgets/periods';
import { accountPk } from '../../store/dynamodb/account-partition';
import { idempotencyToken } from '../../store/dynamodb/idempotency-token';
import { cancellationReasons, cancelledItem } from '../../store/dynamodb/store-errors';
import type { DocumentClient } from '../../store/dynamodb/document-client';

/** How long an account's alert history keeps an alert. */
const HISTORY_DAYS = 90;
const DAY_SECONDS = 86_400;

/**
 * In the accounts table. An account's alerts have a partition of their own, `ACCOUNT#<id>#ALERTS`
 * (away from the account's items, which every request reads):
 *
 * - `CLAIM#<alert key>`: written once per budget, fraction and period, on the condition that it
 *   does not exist yet, naming the alert's id and history entry; `queued` once its delivery is in
 *   the queue; it expires a day after its period ends (a `total` budget's never does);
 * - `SENT#<ISO time>#<id>`: the history the dashboard lists, written in the same transaction as
 *   the claim, with its state and what became of each delivery; it expires after 90 days.
 *
 * The webhook is one item of the account's partition, `ALERT_WEBHOOK`; its signing secret is kept
 * sealed (`sealed_secret`), never as plain text.
 */
const alertsPk = (accountId: string) => `${accountPk(accountId)}#ALERTS`;
const webhookKey = (accountId: string) => ({ pk: accountPk(accountId), sk: 'ALERT_WEBHOOK' });
const sentSk = (sentAt: string, id: string) => `SENT#${sentAt}#${id}`;
const claimKey = (alert: BudgetAlert) => ({ pk: alertsPk(alert.accountId), sk: `CLAIM#${alertKey(alert)}` });

function sentAlert(item: Record<string, unknown>): SentAlert {
  const deliveries = JSON.parse(typeof item.deliveries === 'string' ? item.deliveries : '[]') as DeliveryOutcome[];
  return {
    id: String(item.id),
    sentAt: String(item.sent_at),
    payload: JSON.parse(String(item.payload)) as SentAlert['payload'],
    deliveries,
    // Entries written before alerts had a state were delivered or given up on when written.
    state: (item.state as AlertState | undefined) ?? (deliveries.every((d) => d.delivered) ? 'delivered' : 'failed'),
  };
}

export class DynamoAlertStore implements AlertStore {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
    private readonly secrets: WebhookSecretSealer,
  ) {}

  async claim(alert: BudgetAlert, id: string, sentAt: string, payload: AlertPayload): Promise<AlertClaim> {
    const sentSeconds = Math.floor(Date.parse(sentAt) / 1000);
    const periodEnd = alert.periodStart === undefined ? undefined : resetsAt(alert.period, alert.periodStart);
    const claimExpiry = periodEnd === undefined ? {} : { expires_at: Math.floor(periodEnd / 1000) + DAY_SECONDS };
    try {
      await this.doc.send({
        operation: 'TransactWriteItems',
        input: {
          TransactItems: [
            {
              Put: {
                TableName: this.table,
                Item: { ...claimKey(alert), id, sent_at: sentAt, ...claimExpiry },
                // The one condition that makes an alert single: whoever writes the claim first queues it.
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              Put: {
                TableName: this.table,
                Item: {
                  pk: alertsPk(alert.accountId),
                  sk: sentSk(sentAt, id),
                  id,
                  sent_at: sentAt,
                  payload: JSON.stringify(payload),
                  deliveries: '[]',
                  state: 'pending' satisfies AlertState,
                  expires_at: sentSeconds + HISTORY_DAYS * DAY_SECONDS,
                },
              },
            },
          ],
          // This sender's own attempt, sent again after a lost answer, is reported done; another sender's is not.
          ClientRequestToken: idempotencyToken(id),
        },
      });
      return { id, sentAt, queued: false };
    } catch (error) {
      if (cancellationReasons(error)?.[0] !== 'ConditionalCheckFailed') throw error;
      const stored = (await this.storedClaim(error, alert)) ?? {};
      // A claim written before deliveries were queued (no `sent_at`) was sent when it was written.
      const queued = stored.queued === true || typeof stored.sent_at !== 'string';
      return { id: String(stored.id), sentAt: String(stored.sent_at), queued };
    }
  }

  /** The claim that was there first: from the refused write's answer, or read when the store gave none. */
  private async storedClaim(error: unknown, alert: BudgetAlert): Promise<Record<string, unknown> | undefined> {
    const item = cancelledItem(error, 0);
    if (item) return item;
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: { TableName: this.table, Key: claimKey(alert), ConsistentRead: true },
    });
    return Item;
  }

  async markQueued(alert: BudgetAlert): Promise<void> {
    await this.doc.send({
      operation: 'UpdateItem',
      input: {
        TableName: this.table,
        Key: claimKey(alert),
        UpdateExpression: 'SET queued = :queued',
        ExpressionAttributeValues: { ':queued': true },
      },
    });
  }

  async sent(accountId: string, id: string, sentAt: string): Promise<SentAlert | undefined> {
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: { TableName: this.table, Key: { pk: alertsPk(accountId), sk: sentSk(sentAt, id) }, ConsistentRead: true },
    });
    if (!Item || (typeof Item.expires_at === 'number' && Item.expires_at < Date.now() / 1000)) return undefined;
    return sentAlert(Item);
  }

  async recordDeliveries(
    accountId: string,
    id: string,
    sentAt: string,
    deliveries: DeliveryOutcome[],
    state: AlertState,
  ): Promise<void> {
    await this.doc.send({
      operation: 'UpdateItem',
      input: {
        TableName: this.table,
        Key: { pk: alertsPk(accountId), sk: sentSk(sentAt, id) },
        UpdateExpression: 'SET deliveries = :deliveries, #state = :state',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':deliveries': JSON.stringify(deliveries), ':state': state },
      },
    });
  }

  async recent(accountId: string, limit: number): Promise<SentAlert[]> {
    const now = Math.floor(Date.now() / 1000);
    const { Items = [] } = await this.doc.send({
      operation: 'Query',
      input: {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sent)',
        ExpressionAttributeValues: { ':pk': alertsPk(accountId), ':sent': 'SENT#' },
        ScanIndexForward: false,
        Limit: limit,
      },
    });
    return Items.filter((item) => !(typeof item.expires_at === 'number' && item.expires_at < now)).map(sentAlert);
  }

  async webhook(accountId: string): Promise<AlertWebhook | undefined> {
    const { Item } = await this.doc.send({
      operation: 'GetItem',
      input: { TableName: this.table, Key: webhookKey(accountId), ConsistentRead: true },
    });
    if (!Item || typeof Item.url !== 'string' || typeof Item.sealed_secret !== 'string') return undefined;
    const secret = await this.secrets.open(accountId, Item.sealed_secret);
    return { url: Item.url, secret, updatedAt: String(Item.updated_at) };
  }

  async setWebhook(accountId: string, webhook: AlertWebhook): Promise<void> {
    const sealed = await this.secrets.seal(accountId, webhook.secret);
    await this.doc.send({
      operation: 'PutItem',
      input: {
        TableName: this.table,
        Item: { ...webhookKey(accountId), url: webhook.url, sealed_secret: sealed, updated_at: webhook.updatedAt },
      },
    });
  }

  async removeWebhook(accountId: string): Promise<boolean> {
    const { Attributes } = await this.doc.send({
      operation: 'DeleteItem',
      input: { TableName: this.table, Key: webhookKey(accountId), ReturnValues: 'ALL_OLD' },
    });
    return Attributes !== undefined;
  }
}
