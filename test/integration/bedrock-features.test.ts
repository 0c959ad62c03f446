/**
 * Bedrock meets every feature as the other providers do, through the AWS SDK as docs/bedrock.md sets
 * it up: the cache (JSON and event streams, the path's model in the key), budgets and the rate limit
 * refused in Bedrock's error shape (typed SDK exceptions), `x-api-key` as the credential, and a
 * Bedrock API key saved on the account used instead of the proxy's own signature.
 */
import {
  AccessDeniedException,
  ConverseCommand,
  ConverseStreamCommand,
  ServiceQuotaExceededException,
  ThrottlingException,
} from '@aws-sdk/client-bedrock-runtime';
import { randomBytes } from 'node:crypto';
import { BEDROCK_MODEL as MODEL, bedrockClient } from '../support/bedrock';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const messages = (text: string) => [{ role: 'user' as const, content: [{ text }] }];

function client(server: ProxyServer, token: string, headers: Record<string, string> = {}) {
  return bedrockClient(server.proxyBase, token, headers);
}

/** The raw bytes and headers of a ConverseStream answer, as a client receives them. */
async function rawStream(
  account: Account,
  model: string,
  text: string,
): Promise<{ status: number; cache: string | null; bytes: Buffer }> {
  const response = await fetch(`${proxy.proxyBase}/bedrock/model/${encodeURIComponent(model)}/converse-stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json', 'x-proxy-cache': 'true' },
    body: JSON.stringify({ messages: messages(text) }),
  });
  return {
    status: response.status,
    cache: response.headers.get('x-proxy-cache'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

describe('cache', () => {
  it('Converse (JSON): a repeat is answered from the cache; another model in the path is another question', async () => {
    const account = await proxy.createAccount('bedrock-cache');
    const bedrock = client(proxy, account.token, { 'x-proxy-cache': 'true' });
    const text = `cache ${randomBytes(4).toString('hex')}`;
    const before = proxy.fakes.bedrock.requests.length;
    const first = await bedrock.send(new ConverseCommand({ modelId: MODEL, messages: messages(text) }));
    const second = await bedrock.send(
      new ConverseCommand({ modelId: MODEL, messages: messages(text), inferenceConfig: undefined }),
    );
    expect(second.output).toEqual(first.output);
    expect(proxy.fakes.bedrock.requests.length - before).toBe(1);
    await bedrock.send(
      new ConverseCommand({ modelId: 'us.anthropic.claude-haiku-4-5-20251001-v1:0', messages: messages(text) }),
    );
    expect(proxy.fakes.bedrock.requests.length - before).toBe(2);
    const rows = await proxy.waitForRows(account.token, 3);
    const hit = rows.find((row) => row.cached === true)!;
    expect(hit).toMatchObject({ provider: 'bedrock', kind: 'converse', model: MODEL, cached: true, cost_nanos: 0 });
    expect(hit.saved_nanos).toBe(rows.find((row) => row.cached === false && row.model === MODEL)!.cost_nanos);
  });

  it('ConverseStream: the stored event stream is replayed frame by frame, byte for byte, and the SDK reads it', async () => {
    const account = await proxy.createAccount('bedrock-cache-stream');
    const text = `stream ${randomBytes(4).toString('hex')}`;
    const first = await rawStream(account, MODEL, text);
    expect(first).toMatchObject({ status: 200, cache: 'MISS' });
    expect(first.bytes).toEqual(proxy.fakes.bedrock.requests.at(-1)!.response.body);
    await proxy.waitForRows(account.token, 1);
    const second = await rawStream(account, MODEL, text);
    expect(second).toMatchObject({ status: 200, cache: 'HIT' });
    expect(second.bytes).toEqual(first.bytes);

    // The SDK sends other headers than fetch (`accept` among them), which are in the key (docs/caching.md):
    // its first call is another question, its second is served from the cache and read by the SDK.
    const sdk = client(proxy, account.token, { 'x-proxy-cache': 'true' });
    const usages: unknown[] = [];
    for (let call = 0; call < 2; call++) {
      const answer = await sdk.send(new ConverseStreamCommand({ modelId: MODEL, messages: messages(text) }));
      for await (const event of answer.stream!) if (event.metadata) usages.push(event.metadata.usage);
    }
    expect(usages).toEqual([
      expect.objectContaining({ inputTokens: 25 }),
      expect.objectContaining({ inputTokens: 25 }),
    ]);
    const rows = await proxy.waitForRows(account.token, 4);
    expect(rows.filter((row) => row.cached === true)).toHaveLength(2);
  });
});

describe('credentials', () => {
  it('x-api-key carries the proxy token as well', async () => {
    const response = await fetch(`${proxy.proxyBase}/bedrock/model/${MODEL}/converse`, {
      method: 'POST',
      headers: { 'x-api-key': proxy.account.token, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: messages('hi') }),
    });
    expect(response.status).toBe(200);
    expect(proxy.fakes.bedrock.requests.at(-1)).toMatchObject({ auth: 'sigv4', signatureProblem: undefined });
  });

  it('a Bedrock API key saved on the account is sent instead of the proxy’s signature', async () => {
    const account = await proxy.createAccount('bedrock-saved-key');
    const saved = await proxy.saveKey(
      account.token,
      'bedrock' as never,
      `ABSKc2F2ZWQta2V5${randomBytes(12).toString('hex')}`,
    );
    await client(proxy, account.token).send(new ConverseCommand({ modelId: MODEL, messages: messages('hi') }));
    expect(proxy.fakes.bedrock.requests.at(-1)).toMatchObject({ auth: 'bearer', bearer: saved });
    expect((await proxy.waitForRows(account.token, 1))[0]).toMatchObject({
      provider: 'bedrock',
      mode: 'stored',
      status_code: 200,
    });
  });
});

describe('refusals in Bedrock’s shape', () => {
  it('a used-up budget: 402 before any call, raised as ServiceQuotaExceededException', async () => {
    const account = await proxy.createAccount('bedrock-budget');
    const set = await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
      method: 'PUT',
      token: account.token,
      body: { limit_usd: 0.000001, period: 'day' },
    });
    expect(set.status).toBe(200);
    const bedrock = client(proxy, account.token);
    await bedrock.send(new ConverseCommand({ modelId: MODEL, messages: messages('spend') }));
    await proxy.waitForRows(account.token, 1);
    const before = proxy.fakes.bedrock.requests.length;
    const error = await bedrock
      .send(new ConverseCommand({ modelId: MODEL, messages: messages('more') }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceQuotaExceededException);
    expect((error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(402);
    expect(proxy.fakes.bedrock.requests.length).toBe(before);
  });

  it('a token limited to other models: 403 before any call, raised as AccessDeniedException; a listed model in the path is forwarded', async () => {
    const account = await proxy.createAccount('bedrock-models');
    const set = await proxy.api(`/api/tokens/${account.tokenId}/limits`, {
      method: 'PUT',
      token: account.token,
      body: { models: ['us.anthropic.claude-haiku-'] },
    });
    expect(set.status).toBe(200);
    const bedrock = client(proxy, account.token);
    const before = proxy.fakes.bedrock.requests.length;
    const error = await bedrock
      .send(new ConverseCommand({ modelId: MODEL, messages: messages('not on the list') }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccessDeniedException);
    expect((error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(403);
    expect(proxy.fakes.bedrock.requests.length).toBe(before);
    await bedrock.send(
      new ConverseCommand({
        modelId: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
        messages: messages('on the list'),
      }),
    );
    expect(proxy.fakes.bedrock.requests.length).toBe(before + 1);
  });

  it('the rate limit: 429, raised as ThrottlingException', async () => {
    const limited = await startProxy({ env: { RATE_LIMIT_PER_MINUTE: '2' }, fakes: proxy.fakes });
    try {
      const bedrock = client(limited, limited.account.token);
      await bedrock.send(new ConverseCommand({ modelId: MODEL, messages: messages('one') }));
      await bedrock.send(new ConverseCommand({ modelId: MODEL, messages: messages('one more') }));
      const error = await bedrock
        .send(new ConverseCommand({ modelId: MODEL, messages: messages('two') }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ThrottlingException);
      expect((error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(429);
    } finally {
      await limited.stop();
    }
  });
});
