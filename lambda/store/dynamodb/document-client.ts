import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type marshallOptions } from '@aws-sdk/util-dynamodb';
import { retryPolicies, withRetries, type RetryPolicy } from '../../base/retry';
import type { OperationName, OutputOf, StoreCommand } from './commands';
import { CALL_DEADLINE_MS, sharedDeadline, StoreDeadlineError } from './deadlines';
import type { ItemCalls, ItemOperation } from './item-calls';
import { mayRetryStoreCall } from './store-outage';

/** What the stores need of a DynamoDB client: the commands of `commands.ts` (plain data), each with its own result type. */
export interface DocumentClient {
  send<C extends StoreCommand>(command: C): Promise<OutputOf<C>>;
}

/** What the stores' calls go through, over one pool of connections (client.ts). */
export interface StoreSdkClients {
  /** Single-item calls, on the SDK client's parts without its middleware stack (item-calls.ts). */
  items: ItemCalls;
  /** The others, through `@aws-sdk/lib-dynamodb`'s document commands. */
  documents: DynamoDBClient;
}

type CommandClass = new (input: never) => object;

/** The single-item operations, sent by `ItemCalls` with their items marshalled here. */
const ITEM_OPERATIONS = new Set<OperationName>(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem']);

/** The document command of each other operation. */
const DOCUMENT_COMMANDS: Partial<Record<OperationName, CommandClass>> = {
  Query: QueryCommand,
  BatchGetItem: BatchGetCommand,
  BatchWriteItem: BatchWriteCommand,
  TransactWriteItems: TransactWriteCommand,
};

/** Optional fields left undefined are dropped; class instances are stored as their fields. */
const MARSHALL: marshallOptions = { removeUndefinedValues: true, convertClassInstanceToMap: true };

type Items<Value> = { [Field in 'Key' | 'Item' | 'ExpressionAttributeValues' | 'Attributes']?: Record<string, Value> };

/** A single-item input with its items in DynamoDB's attribute-value form, as a document command would send it. */
function marshallItems(input: Items<unknown>): object {
  const { Key, Item, ExpressionAttributeValues } = input;
  return {
    ...input,
    ...(Key && { Key: marshall(Key, MARSHALL) }),
    ...(Item && { Item: marshall(Item, MARSHALL) }),
    ...(ExpressionAttributeValues && { ExpressionAttributeValues: marshall(ExpressionAttributeValues, MARSHALL) }),
  };
}

/** A single-item answer with its items as plain objects. */
function unmarshallItems(output: Items<AttributeValue>): object {
  const { Item, Attributes } = output;
  return {
    ...output,
    ...(Item && { Item: unmarshall(Item) }),
    ...(Attributes && { Attributes: unmarshall(Attributes) }),
  };
}

/**
 * The stores' client, behind the small `send` the stores call: the SDK's DynamoDB client (SigV4, the
 * credential chain, kept-alive connections), items as plain objects.
 *
 * - Single-item calls (the request path's token gate and usage row among them) are sent by
 *   `ItemCalls` (item-calls.ts) on the SDK client's parts, their items marshalled here by
 *   `@aws-sdk/util-dynamodb`. Such a call's deadline is a race: at it the call throws, and the
 *   attempt in flight runs out on its own silence timeout (client.ts).
 * - The rest are `@aws-sdk/lib-dynamodb`'s document commands; the attempt in flight is aborted at
 *   the deadline.
 *
 * Each send is one attempt (`maxAttempts: 1`, client.ts); the retries are the `storeCall` policy of
 * lambda/base/retry.ts, applied here once, or the caller's own for a command marked `sentOnce`.
 * Every call, its retries included, ends by its deadline (`CALL_DEADLINE_MS`) with
 * `StoreDeadlineError`, which the outage test counts as the store being unavailable.
 */
export class SdkDocumentClient implements DocumentClient {
  private readonly items: ItemCalls;
  private readonly documents: DynamoDBDocumentClient;
  private readonly retries: RetryPolicy = retryPolicies.storeCall(mayRetryStoreCall);

  constructor(
    clients: StoreSdkClients,
    private readonly deadlineMs = CALL_DEADLINE_MS,
  ) {
    this.items = clients.items;
    // A copy: the document commands set their defaults on the options object they are given.
    this.documents = DynamoDBDocumentClient.from(clients.documents, { marshallOptions: { ...MARSHALL } });
  }

  send<C extends StoreCommand>(command: C): Promise<OutputOf<C>> {
    return ITEM_OPERATIONS.has(command.operation) ? this.sendItem(command) : this.sendDocument(command);
  }

  private sendItem<C extends StoreCommand>(command: C): Promise<OutputOf<C>> {
    const what = `DynamoDB ${command.operation}`;
    const input = marshallItems(command.input as Items<unknown>) as never;
    const endsAt = Date.now() + this.deadlineMs;
    const sendOnce = async () => {
      // Past the deadline no attempt starts.
      if (Date.now() >= endsAt) throw new StoreDeadlineError(what, this.deadlineMs);
      const output = await this.items.send(command.operation as ItemOperation, input);
      return unmarshallItems(output) as OutputOf<C>;
    };
    const work = command.sentOnce ? sendOnce() : withRetries(sendOnce, this.retries);
    return sharedDeadline(this.deadlineMs).bound(work, what);
  }

  private async sendDocument<C extends StoreCommand>(command: C): Promise<OutputOf<C>> {
    const DocumentCommand = DOCUMENT_COMMANDS[command.operation]!;
    const what = `DynamoDB ${command.operation}`;
    const abortSignal = AbortSignal.timeout(this.deadlineMs);
    const sendOnce = () => {
      // Past the deadline no attempt starts; the one in flight was aborted with it.
      if (abortSignal.aborted) throw new StoreDeadlineError(what, this.deadlineMs);
      return this.documents.send(new DocumentCommand(command.input as never) as never, {
        abortSignal,
      }) as unknown as Promise<OutputOf<C>>;
    };
    try {
      return await (command.sentOnce ? sendOnce() : withRetries(sendOnce, this.retries));
    } catch (error) {
      if (abortSignal.aborted && !(error instanceof StoreDeadlineError))
        throw new StoreDeadlineError(what, this.deadlineMs, error);
      throw error;
    }
  }
}
