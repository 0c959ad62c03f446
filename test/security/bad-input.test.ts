/**
 * Hostile and random bodies: never a 500 or a crash, always the contracted
 * status in the endpoint's error shape, and a rejected request never reaches
 * the provider. Property tests (fast-check) plus hand-written extremes.
 * Headers, paths, methods and sizes are in bad-input-http.test.ts.
 */
import fc from 'fast-check';
import type { ProviderId } from '../fakes/start-fakes';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import {
  credentialHeaders,
  ENDPOINT,
  expectEndpointError,
  PROVIDERS,
  upstreamCalls,
} from '../reliability/support/requests';
import { allRows } from '../reliability/support/rows';
import { awkwardText, bodyWithOneBadField, invalidField, validBody } from './support/validity';
import { eventually } from '../support/patience';

jest.setTimeout(360_000);

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

let proxy: ProxyServer;
let token: string;

beforeAll(async () => {
  // The per-token limit would otherwise answer 429 before validation runs.
  proxy = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
  token = proxy.account.token;
});
afterAll(async () => {
  await proxy?.stop();
});

interface Sent {
  status: number;
  text: string;
  requestId: string;
}

async function send(provider: ProviderId, body: string | Buffer, headers: Record<string, string> = {}): Promise<Sent> {
  const response = await fetch(proxy.proxyBase + ENDPOINT[provider], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialHeaders(provider, token), ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return {
    status: response.status,
    text: await response.text(),
    requestId: response.headers.get('x-proxy-request-id') ?? '',
  };
}

/** A rejection: the status, the endpoint's error shape, and not one upstream call. */
async function expectRejected(
  provider: ProviderId,
  body: string | Buffer,
  status: number,
  headers?: Record<string, string>,
): Promise<string> {
  const before = upstreamCalls(proxy);
  const result = await send(provider, body, headers);
  expect({ status: result.status, body: result.text.slice(0, 300) }).toEqual({ status, body: expect.any(String) });
  const message = expectEndpointError(provider, result.text);
  expect(upstreamCalls(proxy)).toBe(before);
  return message;
}

const provider = fc.constantFrom(...PROVIDERS);

describe('property: anything that is not a JSON object is a 400', () => {
  test('random text', async () => {
    await fc.assert(
      fc.asyncProperty(provider, fc.string({ unit: 'binary', maxLength: 200 }), async (id, text) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        fc.pre(invalidField(id, parsed) !== undefined);
        await expectRejected(id, text, 400);
      }),
      { numRuns: RUNS },
    );
  });

  test('random bytes (not even UTF-8)', async () => {
    await fc.assert(
      fc.asyncProperty(provider, fc.uint8Array({ minLength: 1, maxLength: 300 }), async (id, bytes) => {
        await expectRejected(id, Buffer.from(bytes), 400);
      }),
      { numRuns: RUNS },
    );
  });

  test('JSON values of every other kind', async () => {
    await fc.assert(
      fc.asyncProperty(
        provider,
        fc.jsonValue({ maxDepth: 4 }).filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
        async (id, value) => {
          await expectRejected(id, JSON.stringify(value), 400);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('property: one spec-named field of the wrong kind', () => {
  test.each(PROVIDERS)('%s: 400 naming the field, or forwarded if the body is in fact valid', async (id) => {
    await fc.assert(
      fc.asyncProperty(bodyWithOneBadField(id), async ({ field, body }) => {
        const text = JSON.stringify(body);
        const bad = invalidField(id, JSON.parse(text));
        if (!bad) {
          // e.g. max_tokens NaN serialises as null, which the chat style allows.
          expect((await send(id, text)).status).toBe(200);
          return;
        }
        expect(bad).toBe(field);
        const message = await expectRejected(id, text, 400);
        expect(message).toContain(field);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

/** What a model id may not hold (SECURITY.md, "Hostile input"): controls, bidirectional marks, separators, BOM, U+FFFD. */
const REFUSED_IN_A_MODEL =
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffd]/;

describe('property: valid bodies full of awkward Unicode are forwarded and logged', () => {
  test('lone surrogates, joiners, RTL marks, NUL, BOM in content: 200 and one row each; in the model, control and bidirectional characters are a 400 without a row', async () => {
    const account = await proxy.createAccount('unicode');
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(provider, awkwardText, awkwardText, fc.boolean(), async (id, content, modelSuffix, stream) => {
        const body = {
          ...validBody(id),
          model: `${validBody(id).model}${modelSuffix}`,
          messages: [{ role: 'user', content }],
          stream,
        };
        const response = await fetch(proxy.proxyBase + ENDPOINT[id], {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...credentialHeaders(id, account.token, 'client-own-key-unicode-0001'),
          },
          body: JSON.stringify(body),
        });
        const text = await response.text();
        if (REFUSED_IN_A_MODEL.test(modelSuffix)) {
          expect(response.status).toBe(400);
          expect(expectEndpointError(id, text)).toContain('model');
          return;
        }
        sent++;
        expect(response.status).toBe(200);
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    proxy.secrets.add('client-own-key-unicode-0001');
    let rows = await allRows(proxy, account.token);
    await eventually(async () => {
      rows = await allRows(proxy, account.token);
      return rows.length >= sent ? true : undefined;
    });
    expect(rows.length).toBe(sent);
  });
});

describe('hand-written extremes', () => {
  test.each([
    ['empty body', ''],
    ['whitespace', '  \n\t '],
    ['truncated', '{"model":"x","messages":[{"role":"user","content":"hi"'],
    ['NaN literal', '{"model":"x","max_tokens":NaN,"messages":[]}'],
    ['trailing comma', '{"model":"x","max_tokens":1,"messages":[],}'],
    ['single quotes', "{'model':'x'}"],
    ['byte order mark before JSON', '\ufeff{"model":"x","max_tokens":1,"messages":[]}'],
    ['null', 'null'],
    ['array', '[{"model":"x"}]'],
    ['__proto__ as the model', '{"__proto__":{"model":"x"},"max_tokens":1,"messages":[]}'],
  ])('%s → 400 in both styles', async (_name, text) => {
    await expectRejected('prov-a', text, 400);
    await expectRejected('prov-e', text, 400);
  });

  test('a huge array of non-messages → 400 naming messages, quickly and without a crash', async () => {
    const body = JSON.stringify({ ...validBody('prov-b'), messages: new Array(500_000).fill(1) });
    expect(await expectRejected('prov-b', body, 400)).toContain('messages');
  });

  test('a huge valid conversation (about 5 MB) is forwarded whole', async () => {
    const messages = Array.from({ length: 120_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'x' }));
    const body = JSON.stringify({ ...validBody('prov-c'), messages });
    expect(body.length).toBeLessThan(6 * 1024 * 1024);
    const result = await send('prov-c', body, { 'x-proxy-cache': 'true' });
    expect(result.status).toBe(200);
    const received = proxy.fakes.fakes['prov-c'].requests.at(-1)!;
    expect(received.body).toBe(body);
  });

  describe('deeply nested values (100,000 levels) inside a valid body', () => {
    const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const nestedBody = (id: ProviderId, stream: boolean) =>
      `{"model":"${validBody(id).model}","max_tokens":16,"stream":${stream},"messages":[{"role":"user","content":${deep(100_000)}}]}`;

    test.each([
      ['prov-d', false, undefined],
      ['prov-a', true, undefined],
      ['prov-b', false, 'true'],
      ['prov-a', false, 'true'],
    ] as const)('%s stream=%s x-proxy-cache=%s: never a 500', async (id, stream, cache) => {
      const result = await send(id, nestedBody(id, stream), cache ? { 'x-proxy-cache': cache } : {});
      expect(result.status).toBeLessThan(500);
      if (result.status >= 400) expectEndpointError(id, result.text);
    });

    test('prov-b stream=true (the proxy adds stream_options upstream): never a 500', async () => {
      const result = await send('prov-b', nestedBody('prov-b', true));
      expect({ status: result.status, body: result.text.slice(0, 200) }).toEqual({
        status: expect.any(Number),
        body: expect.any(String),
      });
      expect(result.status).toBeLessThan(500);
    });
  });

  test('a model name far longer than any real one: the request is answered and its row is still written', async () => {
    const account = await proxy.createAccount('long-model');
    const key = 'client-own-key-long-model-0001';
    proxy.secrets.add(key);
    const body = JSON.stringify({ ...validBody('prov-d'), model: `mistral-${'x'.repeat(500_000)}` });
    const response = await fetch(proxy.proxyBase + ENDPOINT['prov-d'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-d', account.token, key) },
      body,
    });
    await response.text();
    expect(response.status).toBeLessThan(500);
    let rows = await allRows(proxy, account.token);
    await eventually(async () => {
      rows = await allRows(proxy, account.token);
      return rows.length > 0 ? true : undefined;
    });
    expect(rows.map((row) => row.id)).toEqual([response.headers.get('x-proxy-request-id')]);
  });
});

test('after all of it the server is up, and it never answered 500', async () => {
  const health = await fetch(`${proxy.url}/api/health`);
  expect(health.status).toBe(200);
  expect(proxy.output()).not.toMatch(/"status":500/);
});
