import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  BatchWriteCommandInput,
  BatchWriteCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  TransactWriteCommandInput,
  TransactWriteCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';

/**
 * The operations the stores send, by DynamoDB's name, with the input and output types of the
 * matching `@aws-sdk/lib-dynamodb` document command (items as plain objects). A store that needs
 * another operation adds it here and to the client's command map (document-client.ts); the
 * compiler refuses any other.
 */
interface Operations {
  GetItem: { input: GetCommandInput; output: GetCommandOutput };
  PutItem: { input: PutCommandInput; output: PutCommandOutput };
  UpdateItem: { input: UpdateCommandInput; output: UpdateCommandOutput };
  DeleteItem: { input: DeleteCommandInput; output: DeleteCommandOutput };
  Query: { input: QueryCommandInput; output: QueryCommandOutput };
  BatchGetItem: { input: BatchGetCommandInput; output: BatchGetCommandOutput };
  BatchWriteItem: { input: BatchWriteCommandInput; output: BatchWriteCommandOutput };
  TransactWriteItems: { input: TransactWriteCommandInput; output: TransactWriteCommandOutput };
}

export type OperationName = keyof Operations;

/**
 * What a store sends: plain data, the operation and its document input. Each store's calls read
 * as data in its own code, and a test can note or disturb a call by wrapping one `send`.
 */
export type StoreCommand = {
  [Name in OperationName]: {
    readonly operation: Name;
    readonly input: Operations[Name]['input'];
    /** Set by `sentOnce`: one round trip, the caller's own retry policy being the only one. */
    readonly sentOnce?: true;
  };
}[OperationName];
export type CommandOf<Name extends OperationName> = Extract<StoreCommand, { operation: Name }>;
/** What a command answers. */
export type OutputOf<C extends StoreCommand> = Operations[C['operation']]['output'];

/**
 * Marks a command whose caller retries it under its own policy (the row writer's): the client
 * sends it once, so retries never nest and the number of sends stays the caller's to state.
 */
export function sentOnce<T extends StoreCommand>(command: T): T {
  return { ...command, sentOnce: true };
}
