import { BatchGetCommand, BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

type Json = Record<string, unknown>;
type Item = Record<string, unknown>;
type AttributeMap = Parameters<typeof unmarshall>[0];

const toWire = (item: unknown) => marshall(item as Item, { removeUndefinedValues: true, convertClassInstanceToMap: true });
const fromWire = (item: unknown) => unmarshall(item as AttributeMap);
/** An item in DynamoDB's wire form (as error bodies and stream records carry it) as a plain object. */
export const itemFromWire = (item: unknown): Record<string, unknown> => fromWire(item);

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

/**
 * The DynamoDB operations the stores use, as the document client's commands
 * describe them: the wire operation name and which fields carry items (plain
 * objects in the command, AttributeValue maps on the wire).
 */
export const OPERATIONS = [
  { command: GetCommand, name: 'GetItem', input: (i: Json) => mapFields(i, ['Key'], toWire), output: (o: Json) => mapFields(o, ['Item'], fromWire) },
  { command: PutCommand, name: 'PutItem', input: (i: Json) => mapFields(i, ['Item', 'ExpressionAttributeValues'], toWire), output: (o: Json) => mapFields(o, ['Attributes'], fromWire) },
  { command: UpdateCommand, name: 'UpdateItem', input: (i: Json) => mapFields(i, ['Key', 'ExpressionAttributeValues'], toWire), output: (o: Json) => mapFields(o, ['Attributes'], fromWire) },
  { command: DeleteCommand, name: 'DeleteItem', input: (i: Json) => mapFields(i, ['Key', 'ExpressionAttributeValues'], toWire), output: (o: Json) => mapFields(o, ['Attributes'], fromWire) },
  ...([['Query', QueryCommand], ['Scan', ScanCommand]] as const).map(([name, command]) => ({
    command,
    name,
    input: (i: Json) => mapFields(i, ['ExpressionAttributeValues', 'ExclusiveStartKey'], toWire),
    output: (o: Json) => ({ ...mapFields(o, ['LastEvaluatedKey'], fromWire), ...(o.Items ? { Items: (o.Items as unknown[]).map(fromWire) } : {}) }),
  })),
  {
    command: BatchGetCommand,
    name: 'BatchGetItem',
    input: (i: Json) => ({ ...i, RequestItems: mapTables(i.RequestItems, convertKeysAndAttributes(toWire)) }),
    output: (o: Json) => ({
      ...o,
      Responses: mapTables(o.Responses, (items) => (items as unknown[]).map(fromWire)),
      UnprocessedKeys: mapTables(o.UnprocessedKeys, convertKeysAndAttributes(fromWire)),
    }),
  },
  {
    command: BatchWriteCommand,
    name: 'BatchWriteItem',
    input: (i: Json) => ({ ...i, RequestItems: mapTables(i.RequestItems, convertWriteRequests(toWire)) }),
    output: (o: Json) => ({ ...o, UnprocessedItems: mapTables(o.UnprocessedItems, convertWriteRequests(fromWire)) }),
  },
] as const;
