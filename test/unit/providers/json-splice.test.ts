import fc from 'fast-check';
import { objectMembers, setNestedMember, withoutMember } from '../../../lambda/providers/dialects/json-splice';

describe('setNestedMember', () => {
  it('for any object text: the result parses to the same object with the nested member set, and only the edited span differs', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }),
        fc.option(fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue())), { nil: undefined }),
        fc.boolean(),
        (object, options, pretty) => {
          const input = { ...object, ...(options === undefined ? {} : { stream_options: options }) };
          const text = JSON.stringify(input, null, pretty ? 2 : undefined);
          const out = setNestedMember(Buffer.from(text), 'stream_options', 'include_usage', 'true').toString('utf8');
          const parsed = JSON.parse(out);
          const before = JSON.parse(text);
          const expectedOptions =
            before.stream_options !== null &&
            typeof before.stream_options === 'object' &&
            !Array.isArray(before.stream_options)
              ? { ...before.stream_options, include_usage: true }
              : { include_usage: true };
          expect(parsed).toEqual({ ...before, stream_options: expectedOptions });
          // The untouched text around the edit is the client's own.
          let head = 0;
          while (head < text.length && text[head] === out[head]) head++;
          let tail = 0;
          while (tail < text.length - head && text[text.length - 1 - tail] === out[out.length - 1 - tail]) tail++;
          expect(out.length - tail - head).toBeLessThanOrEqual('"stream_options":{"include_usage":true},'.length + 1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads member spans past nested strings with braces, escapes and multi-byte characters', () => {
    const text = '{"a":"}{\\"]","b":[1,{"c":"ü😀"}],"d":-1.5e3,"e":null}';
    const bytes = Buffer.from(text);
    const spans = objectMembers(bytes, 0).map((m) => [m.key, bytes.toString('utf8', m.valueStart, m.valueEnd)]);
    expect(spans).toEqual([
      ['a', '"}{\\"]"'],
      ['b', '[1,{"c":"ü😀"}]'],
      ['d', '-1.5e3'],
      ['e', 'null'],
    ]);
  });
});

describe('withoutMember', () => {
  it('for any object text: the result parses to the same object without the member', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('usage', 'id', 'choices', 'model', 'x'), fc.jsonValue()),
        fc.boolean(),
        (object, pretty) => {
          const text = JSON.stringify(object, null, pretty ? 2 : undefined);
          const out = withoutMember(Buffer.from(text), 'usage').toString('utf8');
          // Compared with the text's own parse: JSON has no -0, so the generated object may differ from it.
          const { usage: _usage, ...rest } = JSON.parse(text) as Record<string, unknown>;
          expect(JSON.parse(out)).toEqual(rest);
          if (!('usage' in object)) expect(out).toBe(text);
        },
      ),
    );
  });

  it('takes the member and one comma; numbers, spacing and a repeated key are handled as written', () => {
    const cut = (text: string) => withoutMember(Buffer.from(text), 'usage').toString('utf8');
    expect(cut('{"usage":null,"n":1.0}')).toBe('{"n":1.0}');
    expect(cut('{"n":1.0,"usage":null}')).toBe('{"n":1.0}');
    expect(cut('{"a":1,"usage":{"x":[1,2]},"b":2}')).toBe('{"a":1,"b":2}');
    expect(cut('{"usage":null}')).toBe('{}');
    expect(cut('{ "a" : 9007199254740993 , "usage" : null }')).toBe('{ "a" : 9007199254740993 }');
    expect(cut('{"usage":1,"a":2,"usage":3}')).toBe('{"a":2}');
  });
});
