import { createHash } from 'node:crypto';
import {
  CACHE_KEY_VERSION,
  cacheKey,
  canonicalJson,
  headerIgnoredBecause,
  IGNORED_FIELDS,
  IGNORED_HEADERS,
  ignoredBecause,
  type CacheKind,
} from '../../../lambda/cache/cache-key';

const messages = [{ role: 'user', content: 'Hello' }];
const chat = {
  accountId: 'acc-1',
  provider: 'prov-b',
  kind: 'chat' as const,
  body: { model: 'fam-4o-mini', messages },
};

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('writes strings and numbers as JSON does, and drops undefined members', () => {
    expect(canonicalJson({ s: 'é"\n', n: 1e21, f: 0.1, u: undefined })).toBe('{"f":0.1,"n":1e+21,"s":"é\\"\\n"}');
    expect(canonicalJson([undefined])).toBe('[null]');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('cacheKey', () => {
  it('is the SHA-256 of the canonical keyed body, namespaced by account, provider, endpoint kind and key version', () => {
    const sha = createHash('sha256')
      .update('{"body":{"messages":[{"content":"Hello","role":"user"}],"model":"fam-4o-mini"}}')
      .digest('hex');
    expect(cacheKey(chat)).toBe(`acc-1#prov-b#chat.${CACHE_KEY_VERSION}#${sha}`);
  });

  it('is not the key of earlier versions, so old entries stop matching', () => {
    const v1 = `acc-1#prov-b#${createHash('sha256')
      .update(canonicalJson({ model: 'fam-4o-mini', messages }))
      .digest('hex')}`;
    const v2 = `acc-1#prov-b#chat.v2#${createHash('sha256')
      .update(canonicalJson({ model: 'fam-4o-mini', messages }))
      .digest('hex')}`;
    const v3 = `acc-1#prov-b#chat.v3#${createHash('sha256')
      .update(canonicalJson({ body: { model: 'fam-4o-mini', messages } }))
      .digest('hex')}`;
    const v4 = `acc-1#prov-b#chat.v4#${createHash('sha256')
      .update(canonicalJson({ body: { model: 'fam-4o-mini', messages } }))
      .digest('hex')}`;
    expect(CACHE_KEY_VERSION).toBe('v5');
    expect(cacheKey(chat)).not.toBe(v4);
    expect(cacheKey(chat)).not.toBe(v1);
    expect(cacheKey(chat)).not.toBe(v2);
    expect(cacheKey(chat)).not.toBe(v3);
  });

  it('holds the query string the provider receives, byte for byte; none and an empty one are the same request', () => {
    const keys = ['beta=true', 'x=1', 'x=2', 'api-version=2024-10-21', 'x=1&y=2', 'y=2&x=1', 'x=%31'].map((query) =>
      cacheKey({ ...chat, query }),
    );
    expect(new Set([...keys, cacheKey(chat)]).size).toBe(keys.length + 1);
    expect(cacheKey({ ...chat, query: '' })).toBe(cacheKey(chat));
    expect(cacheKey({ ...chat, query: 'x=1' })).toBe(cacheKey({ ...chat, query: 'x=1' }));
  });

  it('ignores key order inside the body', () => {
    expect(cacheKey({ ...chat, body: { messages: [{ content: 'Hello', role: 'user' }], model: 'fam-4o-mini' } })).toBe(
      cacheKey(chat),
    );
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

  it('takes the model named in the path, for providers whose model sits there', () => {
    const converse = { ...chat, body: { messages } };
    expect(cacheKey({ ...converse, model: 'model-one' })).not.toBe(cacheKey({ ...converse, model: 'model-two' }));
    expect(cacheKey({ ...converse, model: 'model-one' })).toBe(cacheKey({ ...converse, model: 'model-one' }));
    expect(cacheKey({ ...converse, model: 'model-one' })).not.toBe(cacheKey(converse));
  });

  it('takes a keyed hash of a pass-through key: the same key hits, another key or stored mode does not, and the key is not in it', () => {
    const key = 'sk-caller-key-0123456789abcdef';
    const own = cacheKey({ ...chat, passThroughKey: key });
    expect(cacheKey({ ...chat, passThroughKey: key })).toBe(own);
    expect(cacheKey({ ...chat, passThroughKey: `${key}x` })).not.toBe(own);
    expect(cacheKey(chat)).not.toBe(own);
    expect(own).not.toContain(key);
  });

  const bases: Record<CacheKind, Record<string, unknown>> = {
    messages: { model: 'fam-sonnet-4-6', max_tokens: 100, messages },
    chat: { model: 'fam-4o-mini', messages },
    responses: { model: 'fam-4o-mini', input: 'Hello' },
    embeddings: { model: 'text-embedding-3-small', input: 'Hello' },
    converse: { messages: [{ role: 'user', content: [{ text: 'Hello' }] }] },
    invoke: { anthropic_version: 'bedrock-2023-05-31', messages },
  };

  for (const kind of Object.keys(IGNORED_FIELDS) as CacheKind[]) {
    describe(`${kind} requests`, () => {
      const base = { accountId: 'acc-1', provider: 'prov-x', kind, body: bases[kind] };
      it('every field not on the ignore list is in the key, known or not', () => {
        for (const field of ['model', 'seed', 'a_field_added_tomorrow', 'reasoning', 'thinking']) {
          expect(cacheKey({ ...base, body: { ...base.body, [field]: 'something else' } })).not.toBe(cacheKey(base));
        }
      });
      for (const field of Object.keys(IGNORED_FIELDS[kind])) {
        it(`\`${field}\` is left out (${ignoredBecause(kind, field)})`, () => {
          expect(cacheKey({ ...base, body: { ...base.body, [field]: 12345 } })).toBe(cacheKey(base));
        });
      }
    });
  }
});

describe('numbers are keyed by their literal text', () => {
  const withSeed = (seed: string) => {
    const bodyText = `{"model":"fam-4o-mini","messages":[{"role":"user","content":"Hello"}],"seed":${seed}}`;
    return cacheKey({ ...chat, body: JSON.parse(bodyText) as Record<string, unknown>, bodyText });
  };

  it('integers beyond 2^53 that JavaScript reads as one number are two keys', () => {
    expect(JSON.parse('9007199254740993')).toBe(JSON.parse('9007199254740992'));
    expect(withSeed('9007199254740993')).not.toBe(withSeed('9007199254740992'));
    expect(withSeed('9007199254740993')).toBe(withSeed('9007199254740993'));
  });

  it('`1` and `1.0`, `100` and `1e2` are two keys each; key order and spacing are not', () => {
    expect(withSeed('1')).not.toBe(withSeed('1.0'));
    expect(withSeed('100')).not.toBe(withSeed('1e2'));
    const spaced = '{ "seed" : 1,\n "messages":[{"content":"Hello","role":"user"}], "model":"fam-4o-mini" }';
    expect(cacheKey({ ...chat, body: JSON.parse(spaced) as Record<string, unknown>, bodyText: spaced })).toBe(
      withSeed('1'),
    );
  });

  it('numbers deep inside the body and ignored fields follow the same rule', () => {
    const text = (inner: string, temperature: string) =>
      `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"maximum":${inner}}}}],"temperature":${temperature}}`;
    const key = (inner: string, temperature: string) =>
      cacheKey({ ...chat, body: {}, bodyText: text(inner, temperature) });
    expect(key('10', '0.5')).not.toBe(key('10.0', '0.5'));
    expect(key('10', '0.5')).toBe(key('10', '1.5'));
  });
});

describe('headers', () => {
  const sent = { 'content-type': 'application/json', accept: 'application/json', 'anthropic-version': '2023-06-01' };
  const withHeaders = (headers: Record<string, string>) => cacheKey({ ...chat, headers });

  it('every header that reaches the provider is in the key', () => {
    const key = withHeaders(sent);
    expect(withHeaders({ ...sent, 'anthropic-beta': 'context-1m-2025-08-07' })).not.toBe(key);
    expect(withHeaders({ ...sent, 'openai-organization': 'org-1' })).not.toBe(key);
    expect(withHeaders({ ...sent, accept: 'text/event-stream' })).not.toBe(key);
    expect(withHeaders({ ...sent, 'a-header-added-tomorrow': '1' })).not.toBe(key);
    expect(withHeaders({})).not.toBe(key);
  });

  for (const name of Object.keys(IGNORED_HEADERS)) {
    it(`\`${name}\` is left out (${headerIgnoredBecause(name)})`, () => {
      const header = name.replace('*', 'retry-count');
      expect(withHeaders({ ...sent, [header]: 'one' })).toBe(withHeaders({ ...sent, [header]: 'two' }));
      expect(withHeaders({ ...sent, [header]: 'one' })).toBe(withHeaders(sent));
    });
  }
});

describe('Bedrock: the model is in the path, every body field but the generation settings counts', () => {
  const converse = { messages: [{ role: 'user', content: [{ text: 'Hello' }] }], inferenceConfig: { maxTokens: 100 } };
  const base = {
    accountId: 'acc-1',
    provider: 'bedrock',
    kind: 'converse' as const,
    body: converse,
    model: 'us.anthropic.claude-sonnet-4-6',
  };

  it('another model in the path is another entry', () => {
    expect(cacheKey({ ...base, model: 'us.anthropic.claude-haiku-4-5-20251001-v1:0' })).not.toBe(cacheKey(base));
  });

  it('any other body field (a system prompt, tools, a guardrail, model-specific fields) is another entry', () => {
    for (const [field, value] of Object.entries({
      system: [{ text: 'Be brief.' }],
      toolConfig: { tools: [] },
      guardrailConfig: { guardrailIdentifier: 'g' },
      additionalModelRequestFields: { thinking: { type: 'enabled' } },
      somethingNew: 1,
    })) {
      expect(cacheKey({ ...base, body: { ...converse, [field]: value } })).not.toBe(cacheKey(base));
    }
  });

  it('generation settings are not', () => {
    expect(cacheKey({ ...base, body: { ...converse, requestMetadata: { team: 'a' } } })).toBe(cacheKey(base));
    // inferenceConfig holds stopSequences, which shape the answer: it stays in the key.
    expect(cacheKey({ ...base, body: { ...converse, inferenceConfig: { maxTokens: 4096 } } })).not.toBe(cacheKey(base));
    const invoke = {
      ...base,
      kind: 'invoke' as const,
      body: { anthropic_version: 'bedrock-2023-05-31', messages: [], max_tokens: 10 },
    };
    expect(cacheKey({ ...invoke, body: { ...invoke.body, max_tokens: 99, temperature: 1 } })).toBe(cacheKey(invoke));
    expect(cacheKey({ ...invoke, body: { ...invoke.body, system: 'x' } })).not.toBe(cacheKey(invoke));
  });

  it('Converse and InvokeModel are kept apart (the same body is another question at the other operation)', () => {
    expect(cacheKey({ ...base, kind: 'invoke' })).not.toBe(cacheKey(base));
  });
});
