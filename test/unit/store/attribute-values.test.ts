import { marshall, NumberValueImpl as NumberValue, unmarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { marshallForWire, unmarshallFromWire } from '../../../lambda/store/dynamodb/wire/attribute-values';

/**
 * The lean client converts items itself, in one pass. Its reference is what it replaced:
 * util-dynamodb's marshall / unmarshall, with binaries turned into base64 by a
 * JSON.stringify replacer and back by a JSON.parse reviver.
 */
function encodeBinary(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return original instanceof Uint8Array
    ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64')
    : value;
}
function decodeBinary(key: string, value: unknown): unknown {
  if (key === 'B' && typeof value === 'string') return Buffer.from(value, 'base64');
  if (key === 'BS' && Array.isArray(value) && value.every((v) => typeof v === 'string'))
    return value.map((v) => Buffer.from(v, 'base64'));
  return value;
}
const referenceRequest = (item: unknown) =>
  JSON.stringify(
    marshall(item as Record<string, unknown>, { removeUndefinedValues: true, convertClassInstanceToMap: true }),
    encodeBinary,
  );
const referenceAnswer = (text: string) => unmarshall(JSON.parse(text, decodeBinary));

/** The value, or the error's message: both sides must throw the same errors too. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
  norm() {
    return Math.hypot(this.x, this.y);
  }
}

// `__proto__` as a key sets the converted object's prototype, on both sides alike; jest cannot compare such objects.
const keys = fc.string().filter((key) => key !== '__proto__');
const numbers = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0,
    -0,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    2 ** 53,
    -(2 ** 53),
    1e300,
    5e-324,
    NaN,
    Infinity,
    -Infinity,
  ),
);
const binaries = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
  fc.uint8Array({ maxLength: 40 }),
  // A view into a larger buffer: only its own bytes travel.
  fc.uint8Array({ minLength: 4, maxLength: 40 }).map((bytes) => Buffer.from(bytes).subarray(1, bytes.length - 1)),
);
const leaves = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  numbers,
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  binaries,
  fc.constant(() => 1),
  fc.string().map((text) => new NumberValue(text.replace(/\D/g, '') || '0')),
  fc.date({ noInvalidDate: true }),
  fc.tuple(fc.integer(), fc.integer()).map(([x, y]) => new Point(x, y)),
  // Sets: empty ones (refused), of each kind, mixed, holding undefined.
  fc.array(fc.string(), { maxLength: 4 }).map((items) => new Set(items)),
  fc.array(numbers, { maxLength: 4 }).map((items) => new Set(items)),
  fc.array(fc.bigInt(), { maxLength: 4 }).map((items) => new Set(items)),
  fc.array(binaries, { maxLength: 4 }).map((items) => new Set(items)),
  fc
    .array(fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)), { maxLength: 4 })
    .map((items) => new Set(items)),
  fc.array(fc.boolean(), { minLength: 1, maxLength: 2 }).map((items) => new Set(items)),
);
const { value: values } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaves, tie('list'), tie('map'), tie('mapObject')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  map: fc.dictionary(keys, tie('value'), { maxKeys: 4 }),
  mapObject: fc.array(fc.tuple(keys, tie('value')), { maxLength: 3 }).map((entries) => new Map(entries)),
}));
const items = fc.dictionary(keys, values, { maxKeys: 6 });

describe('items to the wire', () => {
  it('writes what util-dynamodb with a base64 replacer wrote, or throws the same error', () => {
    fc.assert(
      fc.property(fc.oneof(items, values), (item) => {
        expect(outcome(() => JSON.stringify(marshallForWire(item)))).toEqual(outcome(() => referenceRequest(item)));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps big numbers exact as BigInt and refuses imprecise ones', () => {
    expect(
      marshallForWire({
        big: 2n ** 70n,
        max: Number.MAX_SAFE_INTEGER,
        exact: new NumberValue('123456789012345678901234567890.5'),
      }),
    ).toEqual({
      big: { N: '1180591620717411303424' },
      max: { N: '9007199254740991' },
      exact: { N: '123456789012345678901234567890.5' },
    });
    expect(() => marshallForWire({ n: 2 ** 60 })).toThrow('is greater than Number.MAX_SAFE_INTEGER');
    expect(() => marshallForWire({ n: NaN })).toThrow('Special numeric value NaN is not allowed');
  });

  it('writes binaries and binary sets as base64, and refuses empty sets', () => {
    expect(
      marshallForWire({
        b: Buffer.from([1, 2, 255]),
        set: new Set([Buffer.from('a'), new Uint8Array([0])]),
        gone: undefined,
        list: [undefined, 'x'],
      }),
    ).toEqual({
      b: { B: 'AQL/' },
      set: { BS: ['YQ==', 'AA=='] },
      list: { L: [{ S: 'x' }] },
    });
    expect(() => marshallForWire({ tags: new Set() })).toThrow(
      'Pass a non-empty set, or options.convertEmptyValues=true.',
    );
  });

  it('writes the bytes of any other binary view (the replacer sent those as JSON objects DynamoDB refuses)', () => {
    expect(
      marshallForWire({
        a: new Uint16Array([1, 0xffff]),
        b: new Uint8Array([9, 8]).buffer,
        c: new DataView(new Uint8Array([7, 6, 5]).buffer, 1),
      }),
    ).toEqual({
      a: { B: Buffer.from(new Uint16Array([1, 0xffff]).buffer).toString('base64') },
      b: { B: 'CQg=' },
      c: { B: 'BgU=' },
    });
  });
});

/** AttributeValues as DynamoDB could answer them, odd ones included. */
const numberTexts = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.constantFrom(
    '0',
    '-0',
    '0.1',
    '1e400',
    '-1e400',
    '12345678901234567890.5',
    '9007199254740993',
    '-9007199254740993',
    '1E+2',
    'abc',
  ),
);
const { av: attributeValues } = fc.letrec((tie) => ({
  av: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string().map((S) => ({ S })),
    numberTexts.map((N) => ({ N })),
    fc.uint8Array({ maxLength: 30 }).map((bytes) => ({ B: Buffer.from(bytes).toString('base64') })),
    fc.boolean().map((BOOL) => ({ BOOL })),
    fc.constant({ NULL: true }),
    fc.array(fc.string(), { minLength: 1, maxLength: 4 }).map((SS) => ({ SS })),
    fc.array(numberTexts, { minLength: 1, maxLength: 4 }).map((NS) => ({ NS })),
    fc
      .array(fc.uint8Array({ maxLength: 8 }), { minLength: 1, maxLength: 4 })
      .map((list) => ({ BS: list.map((bytes) => Buffer.from(bytes).toString('base64')) })),
    fc.constantFrom({ X: 1 }, {}),
    tie('list'),
    tie('map'),
  ),
  list: fc.array(tie('av'), { maxLength: 4 }).map((L) => ({ L })),
  map: fc.dictionary(keys, tie('av'), { maxKeys: 4 }).map((M) => ({ M })),
}));
const wireItems = fc.dictionary(keys, attributeValues, { maxKeys: 6 });

describe('items from the wire', () => {
  it('reads what util-dynamodb with a base64 reviver read, or throws the same error', () => {
    fc.assert(
      fc.property(wireItems, (wire) => {
        const text = JSON.stringify(wire);
        expect(outcome(() => unmarshallFromWire(JSON.parse(text)))).toEqual(outcome(() => referenceAnswer(text)));
      }),
      { numRuns: 3000 },
    );
  });

  it('round-trips every item the stores can write', () => {
    fc.assert(
      fc.property(items, (item) => {
        const text = outcome(() => JSON.stringify(marshallForWire(item)));
        if (!('value' in (text as object))) return;
        const wire = (text as { value: string }).value;
        expect(unmarshallFromWire(JSON.parse(wire))).toEqual(referenceAnswer(wire));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads big numbers as BigInt, binaries as Buffers, sets as Sets', () => {
    const item = unmarshallFromWire(
      JSON.parse(
        '{"big":{"N":"123456789012345678901"},"n":{"N":"-0.5"},"b":{"B":"AQL/"},"bs":{"BS":["YQ==","AA=="]},"ss":{"SS":["a","b"]},"ns":{"NS":["1","2"]},"l":{"L":[{"NULL":true},{"BOOL":false}]}}',
      ),
    );
    expect(item).toEqual({
      big: 123456789012345678901n,
      n: -0.5,
      b: Buffer.from([1, 2, 255]),
      bs: new Set([Buffer.from('a'), Buffer.from([0])]),
      ss: new Set(['a', 'b']),
      ns: new Set([1, 2]),
      l: [null, false],
    });
    expect(Buffer.isBuffer(item.b)).toBe(true);
    expect(() => unmarshallFromWire({ n: { N: '1.5e400' } })).not.toThrow();
    expect(() => unmarshallFromWire({ n: { N: '12345678901234567890.5' } })).toThrow(
      "12345678901234567890.5 can't be converted to BigInt",
    );
  });
});
