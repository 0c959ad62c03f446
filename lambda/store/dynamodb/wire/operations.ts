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
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { marshallForWire, unmarshallFromWire } from './attribute-values';

type Json = Record<string, unknown>;
type AttributeMap = Parameters<typeof unmarshall>[0];

/**
 * The operations the stores send, by wire name, with the input and output
 * types of the matching `@aws-sdk/lib-dynamodb` document command (items as
 * plain objects). A store that needs another operation adds it here and to
 * `OPERATIONS` below; the compiler refuses any other.
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
 * What a store sends: plain data, the operation and its document input. (The SDK's
 * command classes were built only to have their `input` read back: each one
 * constructs a middleware stack the lean client never runs.)
 */
export type StoreCommand = {
  [Name in OperationName]: {
    readonly operation: Name;
    readonly input: Operations[Name]['input'];
    /** Set by `sentAtMostOnce` (document-client.ts): not sent again once it may have been applied. */
    readonly atMostOnce?: true;
  };
}[OperationName];
export type CommandOf<Name extends OperationName> = Extract<StoreCommand, { operation: Name }>;
/** What a command answers. */
export type OutputOf<C extends StoreCommand> = Operations[C['operation']]['output'];

interface WireOperation {
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
    Object.fromEntries(
      Object.entries(action).map(([kind, request]) => [
        kind,
        mapFields(request as Json, ['Item', 'Key', 'ExpressionAttributeValues'], convert),
      ]),
    ),
  );

/**
 * How each operation's items travel: which fields carry items (plain objects
 * in the command, AttributeValue maps on the wire).
 */
export const OPERATIONS: { readonly [Name in OperationName]: WireOperation } = {
  GetItem: { input: (i) => mapFields(i, ['Key'], toWire), output: (o) => mapFields(o, ['Item'], fromWire) },
  PutItem: {
    input: (i) => mapFields(i, ['Item', 'ExpressionAttributeValues'], toWire),
    output: (o) => mapFields(o, ['Attributes'], fromWire),
  },
  UpdateItem: {
    input: (i) => mapFields(i, ['Key', 'ExpressionAttributeValues'], toWire),
    output: (o) => mapFields(o, ['Attributes'], fromWire),
  },
  DeleteItem: {
    input: (i) => mapFields(i, ['Key', 'ExpressionAttributeValues'], toWire),
    output: (o) => mapFields(o, ['Attributes'], fromWire),
  },
  Query: {
    input: (i) => mapFields(i, ['ExpressionAttributeValues', 'ExclusiveStartKey'], toWire),
    output: (o) => ({
      ...mapFields(o, ['LastEvaluatedKey'], fromWire),
      ...(o.Items ? { Items: (o.Items as unknown[]).map(fromWire) } : {}),
    }),
  },
  BatchGetItem: {
    input: (i) => ({ ...i, RequestItems: mapTables(i.RequestItems, convertKeysAndAttributes(toWire)) }),
    output: (o) => ({
      ...o,
      Responses: mapTables(o.Responses, (items) => (items as unknown[]).map(fromWire)),
      UnprocessedKeys: mapTables(o.UnprocessedKeys, convertKeysAndAttributes(fromWire)),
    }),
  },
  BatchWriteItem: {
    input: (i) => ({ ...i, RequestItems: mapTables(i.RequestItems, convertWriteRequests(toWire)) }),
    output: (o) => ({ ...o, UnprocessedItems: mapTables(o.UnprocessedItems, convertWriteRequests(fromWire)) }),
  },
  TransactWriteItems: {
    input: (i) => ({ ...i, TransactItems: convertTransactItems(toWire)(i.TransactItems) }),
    output: (o) => o,
  },
};
