import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { ANSWER_FIELDS, CACHE_KEY_VERSION, cacheKey, canonicalJson, type CacheKind } from '../../../lambda/cache/cache-key';

const messages = [{ role: 'user', content: 'Hello' }];
const chat = { accountId: 'acc-1', provider: 'prov-b', kind: 'chat' as const, body: { model: 'fam-4o-mini', messages } };

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
  it('is the SHA-256 of the canonical answer fields, namespaced by account, provider, endpoint kind and key version', () => {
    const sha = createHash('sha256').update('{"messages":[{"content":"Hello","role":"user"}],"model":"fam-4o-mini"}').digest('hex');
    expect(cacheKey(chat)).toBe(`acc-1#prov-b#chat.${CACHE_KEY_VERSION}#${sha}`);
  });

  it('is not the key of the first version (model + messages hashed without a kind), so old entries stop matching', () => {
    const v1 = `acc-1#prov-b#${createHash('sha256').update(canonicalJson({ model: 'fam-4o-mini', messages })).digest('hex')}`;
    expect(cacheKey(chat)).not.toBe(v1);
  });

  it('ignores key order inside the body', () => {
    expect(cacheKey({ ...chat, body: { messages: [{ content: 'Hello', role: 'user' }], model: 'fam-4o-mini' } })).toBe(cacheKey(chat));
  });

  it('differs when the account, the provider or the endpoint kind differ', () => {
    const key = cacheKey(chat);
    expect(cacheKey({ ...chat, accountId: 'acc-2' })).not.toBe(key);
    expect(cacheKey({ ...chat, provider: 'prov-c' })).not.toBe(key);
    const sameBody = { model: 'fam-4o', input: 'Hi', messages };
    const kinds: CacheKind[] = ['chat', 'messages', 'responses', 'embeddings'];
    const keys = kinds.map((kind) => cacheKey({ ...chat, kind, body: sameBody }));
    expect(new Set(keys).size).toBe(kinds.length);
  });

  it("can't be forged across namespaces with a separator inside an id", () => {
    const a = cacheKey({ ...chat, accountId: 'x#prov-b', provider: 'y' });
    const b = cacheKey({ ...chat, accountId: 'x', provider: 'prov-b#y' });
    expect(a).not.toBe(b);
  });

  it('a message array and its JSON text are different requests', () => {
    expect(cacheKey({ ...chat, body: { ...chat.body, messages: JSON.stringify(messages) } })).not.toBe(cacheKey(chat));
  });

  // Two values per field, both different from "absent": each must give its own key.
  const answerFieldValues: Record<string, [unknown, unknown]> = {
    model: ['fam-4o', 'fam-4o-mini-2'],
    messages: [[{ role: 'user', content: 'Hi' }], [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi' }]],
    system: ['You are a pirate.', 'Answer only in French.'],
    tools: [[{ type: 'function', function: { name: 'weather', parameters: {} } }], [{ name: 'search', input_schema: { type: 'object' } }]],
    tool_choice: ['auto', { type: 'tool', name: 'search' }],
    functions: [[{ name: 'weather', parameters: {} }], [{ name: 'search', parameters: {} }]],
    function_call: ['auto', { name: 'weather' }],
    response_format: [{ type: 'json_object' }, { type: 'json_schema', json_schema: { name: 'x', schema: {} } }],
    n: [2, 3],
    input: ['Say hi', [{ role: 'user', content: 'Say hi' }]],
    instructions: ['You are a pirate.', 'Answer only in French.'],
    text: [{ format: { type: 'json_object' } }, { format: { type: 'text' } }],
    dimensions: [256, 1024],
    encoding_format: ['float', 'base64'],
  };
  const bases: Record<CacheKind, Record<string, unknown>> = {
    messages: { model: 'fam-sonnet-4-6', max_tokens: 100, messages },
    chat: { model: 'fam-4o-mini', messages },
    responses: { model: 'fam-4o-mini', input: 'Hello' },
    embeddings: { model: 'text-embedding-3-small', input: 'Hello' },
  };

  for (const kind of Object.keys(ANSWER_FIELDS) as CacheKind[]) {
    describe(`${kind} requests`, () => {
      const base = { accountId: 'acc-1', provider: 'prov-x', kind, body: bases[kind] };
      for (const field of ANSWER_FIELDS[kind]) {
        it(`a different \`${field}\` is a different entry`, () => {
          const values = answerFieldValues[field];
          expect(values).toBeDefined();
          const keys = new Set([cacheKey(base), ...values.map((value) => cacheKey({ ...base, body: { ...base.body, [field]: value } }))]);
          expect(keys.size).toBe(3);
        });
      }

      const ignored: Record<string, [unknown, unknown]> = {
        max_tokens: [1, 4096],
        max_completion_tokens: [1, 4096],
        temperature: [0, 1.5],
        top_p: [0.1, 1],
        stream: [true, false],
        stream_options: [{ include_usage: true }, { include_usage: false }],
        seed: [1, 9007199254740992],
        metadata: [{ user_id: 'a' }, { user_id: 'b' }],
        user: ['alice', 'bob'],
      };
      for (const [field, values] of Object.entries(ignored)) {
        if (ANSWER_FIELDS[kind].includes(field)) continue;
        it(`\`${field}\` is a generation setting and does not change the key`, () => {
          const key = cacheKey(base);
          for (const value of values) expect(cacheKey({ ...base, body: { ...base.body, [field]: value } })).toBe(key);
        });
      }
    });
  }

  it('lists exactly the answer fields docs/caching.md documents', () => {
    const readme = readFileSync(join(__dirname, '../../../docs/caching.md'), 'utf8');
    const rows: Record<string, string> = { messages: 'messages (Anthropic)', chat: 'chat completions', responses: 'Responses API', embeddings: 'embeddings' };
    for (const [kind, label] of Object.entries(rows)) {
      const line = readme.split('\n').find((text) => text.trim().startsWith(`| ${label} |`));
      expect(line).toBeDefined();
      const documented = [...line!.split('|')[2].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
      expect(documented).toEqual(ANSWER_FIELDS[kind as CacheKind]);
    }
  });
});
