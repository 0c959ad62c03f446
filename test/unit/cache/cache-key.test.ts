import { createHash } from 'node:crypto';
import { cacheKey, canonicalJson } from '../../../lambda/cache/cache-key';

const messages = [{ role: 'user', content: 'Hello' }];
const base = { accountId: 'acc-1', provider: 'prov-b', model: 'fam-4o-mini', messages };

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('writes strings and numbers as JSON does, and drops undefined members', () => {
    expect(canonicalJson({ s: 'é"\n', n: 1e21, f: 0.1, u: undefined })).toBe('{"f":0.1,"n":1e+21,"s":"é\\"\\n"}');
    expect(canonicalJson([undefined])).toBe('[null]');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('cacheKey', () => {
  it('is the SHA-256 of the canonical {model, messages}, namespaced by account and provider', () => {
    const sha = createHash('sha256').update('{"messages":[{"content":"Hello","role":"user"}],"model":"fam-4o-mini"}').digest('hex');
    expect(cacheKey(base)).toBe(`acc-1#prov-b#${sha}`);
  });

  it('ignores key order inside messages', () => {
    expect(cacheKey({ ...base, messages: [{ content: 'Hello', role: 'user' }] })).toBe(cacheKey(base));
  });

  it('differs when the model, the messages, the account or the provider differ', () => {
    const key = cacheKey(base);
    expect(cacheKey({ ...base, model: 'fam-4o' })).not.toBe(key);
    expect(cacheKey({ ...base, messages: [...messages, { role: 'assistant', content: 'Hi' }] })).not.toBe(key);
    expect(cacheKey({ ...base, messages: [{ role: 'user', content: 'Hello ' }] })).not.toBe(key);
    expect(cacheKey({ ...base, accountId: 'acc-2' })).not.toBe(key);
    expect(cacheKey({ ...base, provider: 'prov-c' })).not.toBe(key);
  });

  it("can't be forged across namespaces with a separator inside an id", () => {
    const a = cacheKey({ ...base, accountId: 'x#prov-b', provider: 'y' });
    const b = cacheKey({ ...base, accountId: 'x', provider: 'prov-b#y' });
    expect(a).not.toBe(b);
  });

  it('a message array and its JSON text are different requests', () => {
    expect(cacheKey({ ...base, messages: JSON.stringify(messages) })).not.toBe(cacheKey(base));
  });
});
