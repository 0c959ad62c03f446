import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
  type BatchWriteCommandOutput,
  type DeleteCommandOutput,
  type GetCommandOutput,
  type PutCommandOutput,
  type QueryCommandOutput,
  type TransactWriteCommandOutput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { marshallForWire, unmarshallFromWire } from './attribute-values';

type Json = Record<string, unknown>;
type AttributeMap = Parameters<typeof unmarshall>[0];

/**
 * The document commands the stores send, by wire operation name, with what
 * each answers. A store that needs another operation adds it here and to
 * `OPERATIONS` below; the compiler refuses any other command.
 */
interface Commands {
  GetItem: { command: GetCommand; output: GetCommandOutput };
  PutItem: { command: PutCommand; output: PutCommandOutput };
  UpdateItem: { command: UpdateCommand; output: UpdateCommandOutput };
  DeleteItem: { command: DeleteCommand; output: DeleteCommandOutput };
  Query: { command: QueryCommand; output: QueryCommandOutput };
  BatchGetItem: { command: BatchGetCommand; output: BatchGetCommandOutput };
  BatchWriteItem: { command: BatchWriteCommand; output: BatchWriteCommandOutput };
  TransactWriteItems: { command: TransactWriteCommand; output: TransactWriteCommandOutput };
}

export type OperationName = keyof Commands;
export type StoreCommand = Commands[OperationName]['command'];
/** What a command answers (each command class is nominal: its protected members tell them apart). */
export type OutputOf<C extends StoreCommand> = { [Name in OperationName]: C extends Commands[Name]['command'] ? Commands[Name]['output'] : never }[OperationName];

interface WireOperation {
  /** The document command's class, to recognise a command by. */
  command: abstract new (...args: never[]) => StoreCommand;
  /** Items as plain objects (the command's input) → AttributeValue maps (the wire). */
  input(input: Json): Json;
  /** The wire's answer → the document command's output. */
  output(output: Json): Json;
}

/** Items as the JSON protocol carries them, binaries in base64 (attribute-values.ts). */
const toWire = marshallForWire;
const fromWire = unmarshallFromWire;
/** An item of a JSON-protocol answer (an error body's `Item`) as a plain object, binaries as Buffers. */
export const itemFromWire = (item: unknown): Record<string, unknown> => fromWire(item);
/**
 * A stream record's image as a plain object. Binaries stay as the record carries them
 * (base64 text in a Lambda event, bytes from the Streams API), as util-dynamodb reads them.
 */
export const itemFromImage = (item: unknown): Record<string, unknown> => unmarshall(item as AttributeMap);

function mapFields(object: Json, fields: readonly string[], convert: (value: unknown) => unknown): Json {
  const out: Json = { ...object };
  for (const field of fields) if (out[field] !== undefined) out[field] = convert(out[field]);
  return out;
}

function mapTables(requestItems: unknown, convert: (perTable: unknown) => unknown): Json | undefined {
  if (!requestItems) return undefined;
  return Object.fromEntries(Object.entries(requestItems as Json).map(([table, value]) => [table, convert(value)]));
}

const convertWriteRequests = (convert: (item: unknown) => unknown) => (requests: unknown) =>
  (requests as Json[]).map((request) => ({
    ...(request.PutRequest ? { PutRequest: { Item: convert((request.PutRequest as Json).Item) } } : {}),
    ...(request.DeleteRequest ? { DeleteRequest: { Key: convert((request.DeleteRequest as Json).Key) } } : {}),
  }));

const convertKeysAndAttributes = (convert: (item: unknown) => unknown) => (entry: unknown) => ({
  ...(entry as Json),
  Keys: ((entry as Json).Keys as unknown[]).map(convert),
});

/** Each action of a transaction: a Put carries an item, the others a key; all may carry expression values. */
const convertTransactItems = (convert: (item: unknown) => unknown) => (actions: unknown) =>
  (actions as Json[]).map((action) =>
    Object.fromEntries(Object.entries(action).map(([kind, request]) => [kind, mapFields(request as Json, ['Item', 'Key', 'ExpressionAttributeValues'], convert)])),
  );

/**
 * How each operation's items travel: which fields carry items (plain objects
 * in the command, AttributeValue maps on the wire).
 */
export const OPERATIONS: { readonly [Name in OperationName]: WireOperation } = {
  GetItem: { command: GetCommand, input: (i) => mapFields(i, ['Key'], toWire), output: (o) => mapFields(o, ['Item'], fromWire) },
  PutItem: { command: PutCommand, input: (i) => mapFields(i, ['Item', 'ExpressionAttributeValues'], toWire), output: (o) => mapFields(o, ['Attributes'], fromWire) },
  UpdateItem: { command: UpdateCommand, input: (i) => mapFields(i, ['Key', 'ExpressionAttributeValues'], toWire), output: (o) => mapFields(o, ['Attributes'], fromWire) },
  DeleteItem: { command: DeleteCommand, input: (i) => mapFields(i, ['Key', 'ExpressionAttributeValues'], toWire), output: (o) => mapFields(o, ['Attributes'], fromWire) },
  Query: {
    command: QueryCommand,
    input: (i) => mapFields(i, ['ExpressionAttributeValues', 'ExclusiveStartKey'], toWire),
    output: (o) => ({ ...mapFields(o, ['LastEvaluatedKey'], fromWire), ...(o.Items ? { Items: (o.Items as unknown[]).map(fromWire) } : {}) }),
  },
  BatchGetItem: {
    command: BatchGetCommand,
    input: (i) => ({ ...i, RequestItems: mapTables(i.RequestItems, convertKeysAndAttributes(toWire)) }),
    output: (o) => ({
      ...o,
      Responses: mapTables(o.Responses, (items) => (items as unknown[]).map(fromWire)),
      UnprocessedKeys: mapTables(o.UnprocessedKeys, convertKeysAndAttributes(fromWire)),
    }),
  },
  BatchWriteItem: {
    command: BatchWriteCommand,
    input: (i) => ({ ...i, RequestItems: mapTables(i.RequestItems, convertWriteRequests(toWire)) }),
    output: (o) => ({ ...o, UnprocessedItems: mapTables(o.UnprocessedItems, convertWriteRequests(fromWire)) }),
  },
  TransactWriteItems: { command: TransactWriteCommand, input: (i) => ({ ...i, TransactItems: convertTransactItems(toWire)(i.TransactItems) }), output: (o) => o },
};

const BY_NAME = Object.entries(OPERATIONS) as Array<[OperationName, WireOperation]>;

/** The wire operation of a command, or undefined for one the stores never send. */
export function operationOf(command: object): [OperationName, WireOperation] | undefined {
  return BY_NAME.find(([, operation]) => command instanceof operation.command);
}
