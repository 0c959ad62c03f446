/**
 * Amazon Bedrock through the AWS SDK's Bedrock Runtime client, set up as docs/bedrock.md shows it
 * (`endpoint` at the proxy, the proxy token as the Bedrock API key, HTTP/1.1), against a fake Bedrock
 * Runtime that verifies SigV4 signatures. Stored mode signs with the runtime's AWS credentials;
 * pass-through sends the caller's own Bedrock API key. Each call's row is exact.
 */
import {
  AccessDeniedException,
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ServiceQuotaExceededException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { randomBytes } from 'node:crypto';
import { BEDROCK_TEXT, DEFAULT_BEDROCK_USAGE, type BedrockRequest } from '../fakes/fake-bedrock';
import {
  BEDROCK_COST_NANOS as COST_NANOS,
  BEDROCK_MODEL as MODEL,
  bedrockClient,
  rowOfRequester,
  uniqueRequester as requester,
} from '../support/bedrock';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const U = DEFAULT_BEDROCK_USAGE;

/** The client as docs/bedrock.md shows it, labelled with `user`; pass-through when `ownKey` is given. */
function bedrock(user: string, mode: { token: string; ownKey?: string } = { token: proxy.account.token }) {
  return bedrockClient(proxy.proxyBase, mode.ownKey ?? mode.token, {
    'x-proxy-user': user,
    ...(mode.ownKey ? { 'x-proxy-token': mode.token } : {}),
  });
}

const rowOf = (user: string) => rowOfRequester(proxy, user);

function lastRequest(): BedrockRequest {
  return proxy.fakes.bedrock.requests.at(-1)!;
}

const messages = [{ role: 'user' as const, content: [{ text: 'Hello' }] }];
const exactRow = (user: string, kind: string, stream: boolean, mode = 'stored') => ({
  provider: 'bedrock',
  kind,
  model: MODEL,
  input_tokens: U.input + U.cacheRead + U.cacheWrite,
  output_tokens: U.output,
  cache_read_tokens: U.cacheRead,
  cache_write_tokens: U.cacheWrite,
  cost_nanos: COST_NANOS,
  priced: true,
  price_source: 'genai-prices@0.1.8',
  status_code: 200,
  stream,
  cached: false,
  requester: user,
  mode,
});

describe('stored mode: the proxy signs with its own AWS credentials', () => {
  it('ConverseCommand: the answer as sent, a valid SigV4 signature upstream, the row exact to the nano-dollar', async () => {
    const user = requester('converse');
    const answer = await bedrock(user).send(new ConverseCommand({ modelId: MODEL, messages }));
    expect(answer.output?.message?.content?.[0]?.text).toBe(BEDROCK_TEXT.join(''));
    expect(answer.usage).toMatchObject({
      inputTokens: U.input,
      outputTokens: U.output,
      cacheReadInputTokens: U.cacheRead,
      cacheWriteInputTokens: U.cacheWrite,
    });
    const upstream = lastRequest();
    expect(upstream).toMatchObject({ auth: 'sigv4', signatureProblem: undefined, operation: 'converse', model: MODEL });
    expect(upstream.headers['x-amz-security-token']).toBe(proxy.fakes.bedrock.secrets.sessionToken);
    // Nothing of the client's credential travels on.
    expect(JSON.stringify(upstream.headers)).not.toContain(proxy.account.token);
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'converse', false));
  });

  it('ConverseStreamCommand: every event through, usage from the metadata event', async () => {
    const user = requester('converse-stream');
    const answer = await bedrock(user).send(new ConverseStreamCommand({ modelId: MODEL, messages }));
    const events: string[] = [];
    let text = '';
    for await (const event of answer.stream!) {
      events.push(Object.keys(event)[0]!);
      text += event.contentBlockDelta?.delta?.text ?? '';
      if (event.metadata)
        expect(event.metadata.usage).toMatchObject({ inputTokens: U.input, cacheReadInputTokens: U.cacheRead });
    }
    expect(text).toBe(BEDROCK_TEXT.join(''));
    expect(events).toEqual([
      'messageStart',
      ...BEDROCK_TEXT.map(() => 'contentBlockDelta'),
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(lastRequest()).toMatchObject({ auth: 'sigv4', signatureProblem: undefined, operation: 'converse-stream' });
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'converse', true));
  });

  it('InvokeModelCommand with Anthropic’s body: usage from the body, cache reads and writes apart', async () => {
    const user = requester('invoke');
    const body = JSON.stringify({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const answer = await bedrock(user).send(
      new InvokeModelCommand({ modelId: MODEL, body, contentType: 'application/json', accept: 'application/json' }),
    );
    const message = JSON.parse(Buffer.from(answer.body).toString('utf8'));
    expect(message.content[0].text).toBe(BEDROCK_TEXT.join(''));
    expect(Buffer.from(answer.body)).toEqual(lastRequest().response.body);
    expect(lastRequest()).toMatchObject({ auth: 'sigv4', signatureProblem: undefined, operation: 'invoke' });
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'invoke', false));
  });

  it('InvokeModelWithResponseStreamCommand: Anthropic’s events inside the chunks, usage from them', async () => {
    const user = requester('invoke-stream');
    const body = JSON.stringify({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const answer = await bedrock(user).send(
      new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body, contentType: 'application/json' }),
    );
    let text = '';
    for await (const event of answer.body!) {
      const chunk = JSON.parse(Buffer.from(event.chunk!.bytes!).toString('utf8'));
      if (chunk.type === 'content_block_delta') text += chunk.delta.text;
    }
    expect(text).toBe(BEDROCK_TEXT.join(''));
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'invoke', true));
  });

  it('another model family (Llama) via InvokeModel: usage from the token-count headers; streamed, from the invocation metrics', async () => {
    const llama = 'meta.llama3-3-70b-instruct-v1:0';
    const llamaCost = Math.round((U.input + U.output) * 0.72 * 1e3);
    const user = requester('llama');
    await bedrock(user).send(
      new InvokeModelCommand({ modelId: llama, body: JSON.stringify({ prompt: 'Hello', max_gen_len: 64 }) }),
    );
    const row = await rowOf(user);
    // Llama has no prompt cache: its headers report none, and the row has none.
    expect(row).toMatchObject({
      model: llama,
      kind: 'invoke',
      input_tokens: U.input,
      output_tokens: U.output,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_nanos: llamaCost,
      priced: true,
    });
    const streamUser = requester('llama-stream');
    const answer = await bedrock(streamUser).send(
      new InvokeModelWithResponseStreamCommand({ modelId: llama, body: JSON.stringify({ prompt: 'Hello' }) }),
    );
    for await (const _event of answer.body!) void _event;
    expect(await rowOf(streamUser)).toMatchObject({
      model: llama,
      kind: 'invoke',
      stream: true,
      input_tokens: U.input,
      output_tokens: U.output,
      cache_read_tokens: 0,
      cost_nanos: llamaCost,
      priced: true,
    });
  });

  it('an inference-profile ARN as the model id: sent encoded, signed as AWS expects, the row names the ARN', async () => {
    const arn = `arn:aws:bedrock:us-east-1:123456789012:inference-profile/${MODEL}`;
    const user = requester('arn');
    await bedrock(user).send(new ConverseCommand({ modelId: arn, messages }));
    expect(lastRequest()).toMatchObject({ model: arn, signatureProblem: undefined });
    expect(lastRequest().rawPath).toContain('%2F');
    expect(await rowOf(user)).toMatchObject({ model: arn, cost_nanos: COST_NANOS, priced: true });
  });

  it('an unknown model is unpriced, never $0 priced', async () => {
    const user = requester('unknown-model');
    await bedrock(user).send(new ConverseCommand({ modelId: 'example.unknown-model-v9:0', messages }));
    expect(await rowOf(user)).toMatchObject({
      model: 'example.unknown-model-v9:0',
      priced: false,
      cost_nanos: 0,
      input_tokens: U.input + U.cacheRead + U.cacheWrite,
    });
  });
});

describe('pass-through mode: the caller’s own Bedrock API key', () => {
  it('goes upstream as the Bearer token, unsigned; the row is exact', async () => {
    const user = requester('own-key');
    const ownKey = `ABSKQmVkcm9ja0FQSUtleS${randomBytes(16).toString('hex')}`;
    proxy.secrets.add(ownKey);
    await bedrock(user, { token: proxy.account.token, ownKey }).send(new ConverseCommand({ modelId: MODEL, messages }));
    expect(lastRequest()).toMatchObject({ auth: 'bearer', bearer: ownKey });
    expect(lastRequest().headers['x-proxy-token']).toBeUndefined();
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'converse', false, 'pass-through'));
  });

  it('streams too', async () => {
    const user = requester('own-key-stream');
    const ownKey = `ABSKQmVkcm9ja0FQSUtleS${randomBytes(16).toString('hex')}`;
    proxy.secrets.add(ownKey);
    const answer = await bedrock(user, { token: proxy.account.token, ownKey }).send(
      new ConverseStreamCommand({ modelId: MODEL, messages }),
    );
    for await (const _event of answer.stream!) void _event;
    expect(lastRequest()).toMatchObject({ auth: 'bearer', bearer: ownKey });
    expect(await rowOf(user)).toMatchObject(exactRow(user, 'converse', true, 'pass-through'));
  });
});

describe('errors', () => {
  it('Bedrock’s own error passes through as the SDK’s typed exception; the row keeps its message', async () => {
    const user = requester('throttled');
    // The proxy tries a throttled target three times (docs/fallbacks.md): Bedrock throttles all three.
    for (let attempt = 0; attempt < 3; attempt++)
      proxy.fakes.bedrock.next({
        status: 429,
        errorType: 'ThrottlingException',
        errorMessage: 'Too many requests, please wait before trying again.',
      });
    const error = await bedrock(user)
      .send(new ConverseCommand({ modelId: MODEL, messages }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottlingException);
    expect((error as Error).message).toBe('Too many requests, please wait before trying again.');
    expect(await rowOf(user)).toMatchObject({
      status_code: 429,
      error: 'Too many requests, please wait before trying again.',
      input_tokens: 0,
      cost_nanos: 0,
    });
  });

  it('an exception inside a stream reaches the SDK as that exception; the row records it', async () => {
    const user = requester('stream-exception');
    proxy.fakes.bedrock.next({
      streamException: { type: 'throttlingException', message: 'Rate exceeded mid-stream.' },
    });
    const answer = await bedrock(user).send(new ConverseStreamCommand({ modelId: MODEL, messages }));
    const error = await (async () => {
      for await (const _event of answer.stream!) void _event;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottlingException);
    expect(await rowOf(user)).toMatchObject({
      status_code: 200,
      error: 'throttlingException: Rate exceeded mid-stream.',
    });
  });

  it('the proxy’s own refusals come in Bedrock’s shape, so the SDK raises its typed exceptions', async () => {
    const invalid = await bedrock(requester('bad-token'), { token: 'sk-proxy-not-a-real-token' })
      .send(new ConverseCommand({ modelId: MODEL, messages }))
      .catch((e: unknown) => e);
    expect((invalid as Error).name).toBe('UnrecognizedClientException');
    expect((invalid as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(401);
    expect((invalid as Error).message).toBe('Invalid proxy token.');

    const response = await fetch(`${proxy.proxyBase}/bedrock/model/${MODEL}/converse`, {
      method: 'POST',
      headers: { authorization: `Bearer ${proxy.account.token}`, 'content-type': 'application/json' },
      body: '[1, 2]',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-amzn-errortype')).toBe('ValidationException');
    expect(await response.json()).toEqual({ message: 'The request body must be a JSON object.' });
    void [AccessDeniedException, ServiceQuotaExceededException, ValidationException];
  });
});

it('without requestHandler: new NodeHttpHandler(), the client’s default HTTP/2 fails against the local server (docs/bedrock.md)', async () => {
  const client = new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: `${proxy.proxyBase}/bedrock`,
    token: { token: proxy.account.token },
    authSchemePreference: ['httpBearerAuth'],
    maxAttempts: 1,
  });
  const error = await client.send(new ConverseCommand({ modelId: MODEL, messages })).catch((e: unknown) => e);
  expect(String((error as { code?: string }).code ?? (error as Error).message)).toMatch(/HTTP2/);
  client.destroy();
});
