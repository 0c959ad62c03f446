import { NumberValueImpl as NumberValue } from '@aws-sdk/util-dynamodb';

/**
 * Items ⇄ DynamoDB's JSON-protocol AttributeValues, in one pass each way.
 *
 * The same conversions as `@aws-sdk/util-dynamodb` (`marshall` with
 * `removeUndefinedValues` and `convertClassInstanceToMap`, `unmarshall` with
 * its defaults: numbers beyond the safe integers as BigInt, empty sets
 * refused), checked against it value by value in
 * test/unit/store/attribute-values.test.ts. What differs is where binaries
 * turn into base64 and back: here, inside the conversion, instead of a
 * replacer or reviver function that `JSON.stringify` and `JSON.parse` would
 * call for every key of every request and answer.
 */

type Json = Record<string, unknown>;

const UNDEFINED_VALUE = 'Pass options.removeUndefinedValues=true to remove undefined values from map/array/set.';

/** The constructor names util-dynamodb treats as binary. */
const BINARY_TYPES = new Set([
  'ArrayBuffer',
  'Blob',
  'Buffer',
  'DataView',
  'File',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
]);

const isBinary = (data: unknown): boolean => {
  const name = (data as { constructor?: { name?: string } } | null | undefined)?.constructor?.name;
  return name !== undefined && BINARY_TYPES.has(name);
};

/** A binary as the JSON protocol carries it (base64); anything else as it is. */
function binaryToWire(data: unknown): unknown {
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64');
  return data;
}

function numberToWire(num: number): Json {
  const text = num.toString();
  if (text === 'NaN' || text === 'Infinity' || text === '-Infinity')
    throw new Error(`Special numeric value ${text} is not allowed`);
  if (Number(num) > Number.MAX_SAFE_INTEGER)
    throw new Error(
      `Number ${text} is greater than Number.MAX_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`,
    );
  if (Number(num) < Number.MIN_SAFE_INTEGER)
    throw new Error(
      `Number ${text} is lesser than Number.MIN_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`,
    );
  return { N: text };
}

function mapToWire(entries: Iterable<[unknown, unknown]> | undefined, object?: object): Json {
  const map: Json = {};
  if (entries) {
    for (const [key, value] of entries)
      if (typeof value !== 'function' && value !== undefined) map[key as string] = toWire(value);
  } else {
    // `for…in`, as util-dynamodb: inherited enumerable properties too.
    for (const key in object) {
      const value = (object as Json)[key];
      if (typeof value !== 'function' && value !== undefined) map[key] = toWire(value);
    }
  }
  return { M: map };
}

function setToWire(set: Set<unknown>): Json {
  const values = [...set].filter((value) => value !== undefined);
  if (values.length === 0) throw new Error('Pass a non-empty set, or options.convertEmptyValues=true.');
  const first = values[0];
  if (first instanceof NumberValue) return { NS: values.map((value) => (value as NumberValue).toString()) };
  if (typeof first === 'number') return { NS: values.map((value) => numberToWire(value as number).N) };
  if (typeof first === 'bigint') return { NS: values.map((value) => (value as bigint).toString()) };
  if (typeof first === 'string') return { SS: values.map((value) => (value as string).toString()) };
  if (isBinary(first)) return { BS: values.map(binaryToWire) };
  throw new Error('Only Number Set (NS), Binary Set (BS) or String Set (SS) are allowed.');
}

/** One value as an AttributeValue, in util-dynamodb's order of checks (primitives first: they can match nothing before). */
function toWire(data: unknown): Json {
  switch (typeof data) {
    case 'string':
      return { S: data };
    case 'number':
      return numberToWire(data);
    case 'boolean':
      return { BOOL: data };
    case 'bigint':
      return { N: data.toString() };
    case 'undefined':
      throw new Error(UNDEFINED_VALUE);
    case 'object': {
      if (data === null) return { NULL: true };
      if (Array.isArray(data))
        return { L: data.filter((item) => typeof item !== 'function' && item !== undefined).map(toWire) };
      const name = (data as { constructor?: { name?: string } }).constructor?.name;
      if (name === 'Set') return setToWire(data as Set<unknown>);
      if (name === 'Map') return mapToWire(data as Map<unknown, unknown>);
      if (name === 'Object' || !data.constructor) return mapToWire(undefined, data);
      if (isBinary(data)) return { B: binaryToWire(data) };
      if (name === 'Boolean') return { BOOL: data.valueOf() };
      if (name === 'Number') return numberToWire(data.valueOf() as number);
      if (data instanceof NumberValue) return data.toAttributeValue();
      if (name === 'String') return { S: data.valueOf() };
      // convertClassInstanceToMap: a class instance is stored as its enumerable properties.
      return mapToWire(undefined, data);
    }
  }
  throw new Error(
    `Unsupported type passed: ${data as string}. Pass options.convertClassInstanceToMap=true to marshall typeof object as map attribute.`,
  );
}

/** An item (or key, or expression values) as the JSON protocol sends it: a map of AttributeValues, binaries in base64. */
export function marshallForWire(item: unknown): unknown {
  const value = toWire(item);
  // As util-dynamodb's `marshall`: a map or list at the top is given without its wrapper.
  if ('M' in value) return value.M;
  if ('L' in value) return value.L;
  return value;
}

function numberFromWire(text: string): number | bigint {
  const num = Number(text);
  if ((num > Number.MAX_SAFE_INTEGER || num < Number.MIN_SAFE_INTEGER) && num !== Infinity && num !== -Infinity) {
    try {
      return BigInt(text);
    } catch {
      throw new Error(`${text} can't be converted to BigInt. Set options.wrapNumbers to get string value.`);
    }
  }
  return num;
}

const binaryFromWire = (value: unknown) => (typeof value === 'string' ? Buffer.from(value, 'base64') : value);

function fromWire(value: Json): unknown {
  for (const key of Object.keys(value)) {
    const content = value[key];
    if (content === undefined) continue;
    switch (key) {
      case 'NULL':
        return null;
      case 'BOOL':
        return Boolean(content);
      case 'N':
        return numberFromWire(content as string);
      case 'B':
        return binaryFromWire(content);
      case 'S':
        return content;
      case 'L':
        return (content as Json[]).map(fromWire);
      case 'M':
        return mapFromWire(content as Json);
      case 'NS':
        return new Set((content as string[]).map(numberFromWire));
      case 'BS': {
        const items = content as unknown[];
        return new Set(items.every((item) => typeof item === 'string') ? items.map(binaryFromWire) : items);
      }
      case 'SS':
        return new Set(content as string[]);
      default:
        throw new Error(`Unsupported type passed: ${key}`);
    }
  }
  throw new Error(`No value defined: ${JSON.stringify(value)}`);
}

function mapFromWire(map: Json): Json {
  const item: Json = {};
  for (const key of Object.keys(map)) item[key] = fromWire(map[key] as Json);
  return item;
}

/** An item as the JSON protocol answers it (a map of AttributeValues, binaries in base64) as a plain object. */
export function unmarshallFromWire(item: unknown): Record<string, unknown> {
  return mapFromWire(item as Json);
}
