import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { retryPolicies, withRetries, type RetryPolicy } from '../../base/retry';
import type { OperationName, OutputOf, StoreCommand } from './commands';
import { CALL_DEADLINE_MS, StoreDeadlineError } from './deadlines';
import { mayRetryStoreCall } from './store-outage';

/** What the stores need of a DynamoDB client: the commands of `commands.ts` (plain data), each with its own result type. */
export interface DocumentClient {
  send<C extends StoreCommand>(command: C): Promise<OutputOf<C>>;
}

/** The SDK's document command for each operation. */
const COMMANDS: { readonly [Name in OperationName]: new (input: never) => object } = {
  GetItem: GetCommand,
  PutItem: PutCommand,
  UpdateItem: UpdateCommand,
  DeleteItem: DeleteCommand,
  Query: QueryCommand,
  BatchGetItem: BatchGetCommand,
  BatchWriteItem: BatchWriteCommand,
  TransactWriteItems: TransactWriteCommand,
};

/**
 * The stores' client: `@aws-sdk/lib-dynamodb`'s document client (marshalling, SigV4, the
 * credential chain, the kept-alive connections of its `DynamoDBClient`) behind the small `send`
 * the stores call. The SDK makes one attempt per send (`maxAttempts: 1`, client.ts); the retries
 * are the `storeCall` policy of lambda/base/retry.ts, applied here once, or the caller's own for a
 * command marked `sentOnce`. Every call, its retries included, ends by its deadline
 * (`CALL_DEADLINE_MS`): the attempt in flight is aborted and the call throws `StoreDeadlineError`,
 * which the outage test counts as the store being unavailable.
 */
export class SdkDocumentClient implements DocumentClient {
  private readonly documents: DynamoDBDocumentClient;
  private readonly retries: RetryPolicy = retryPolicies.storeCall(mayRetryStoreCall);

  constructor(
    client: DynamoDBClient,
    private readonly deadlineMs = CALL_DEADLINE_MS,
  ) {
    this.documents = DynamoDBDocumentClient.from(client, {
      // Optional fields left undefined are dropped; class instances are stored as their fields.
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
    });
  }

  async send<C extends StoreCommand>(command: C): Promise<OutputOf<C>> {
    const Command = COMMANDS[command.operation];
    const abortSignal = AbortSignal.timeout(this.deadlineMs);
    const sendOnce = () => {
      // Past the deadline no attempt starts; the one in flight was aborted with it.
      if (abortSignal.aborted) throw new StoreDeadlineError(`DynamoDB ${command.operation}`, this.deadlineMs);
      return this.documents.send(new Command(command.input as never) as never, {
        abortSignal,
      }) as unknown as Promise<OutputOf<C>>;
    };
    try {
      return await (command.sentOnce ? sendOnce() : withRetries(sendOnce, this.retries));
    } catch (error) {
      if (abortSignal.aborted && !(error instanceof StoreDeadlineError))
        throw new StoreDeadlineError(`DynamoDB ${command.operation}`, this.deadlineMs, error);
      throw error;
    }
  }
}
